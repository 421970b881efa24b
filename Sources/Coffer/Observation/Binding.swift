// Binding: a value read and written through two functions, for the projected
// values of the observed wrappers. SwiftUI's `Binding` where SwiftUI exists;
// elsewhere (Linux) a small type of the same shape.

#if canImport(SwiftUI)
import SwiftUI

/// The binding the observed wrappers' projected values hand out: SwiftUI's
/// own where SwiftUI exists.
public typealias DatabaseBinding<Value> = SwiftUI.Binding<Value>
#else

/// A value read and written through two functions, as SwiftUI's `Binding`:
/// `$object.name` of an ``ObservedDatabaseObject`` is one, and setting its
/// ``wrappedValue`` writes the property in a transaction.
///
/// SwiftUI's `Binding` takes its place where SwiftUI exists; this type has
/// the same initializer and properties, so code using them builds on both.
@propertyWrapper
@dynamicMemberLookup
public struct Binding<Value> {
    private let get: () -> Value
    private let set: (Value) -> Void

    /// A binding reading with `get` and writing with `set`.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        self.get = get
        self.set = set
    }

    /// A binding to a value that never changes; writing it does nothing.
    public static func constant(_ value: Value) -> Binding<Value> {
        Binding(get: { value }, set: { _ in })
    }

    /// The value: reading calls the getter, writing the setter.
    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }

    /// The binding itself, as SwiftUI's `$binding`.
    public var projectedValue: Binding<Value> { self }

    /// A binding to a property of the value, written back through this one.
    public subscript<Property>(dynamicMember keyPath: WritableKeyPath<Value, Property>) -> Binding<Property> {
        Binding<Property>(get: { self.wrappedValue[keyPath: keyPath] },
                          set: { self.wrappedValue[keyPath: keyPath] = $0 })
    }
}

/// The binding the observed wrappers' projected values hand out: SwiftUI's
/// own where SwiftUI exists, ``Binding`` elsewhere.
public typealias DatabaseBinding<Value> = Binding<Value>
#endif
