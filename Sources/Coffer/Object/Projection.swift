// Projection and @Projected: light view models that show some properties of an
// Object under their own names.

/// A light view model of an ``Object``: a class that shows some of the
/// object's properties, under its own names, as in Realm Swift.
///
/// ```swift
/// final class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName
///     @Projected(\Person.lastName.localizedUppercase) var lastNameCaps
///     @Projected(\Person.address?.city) var homeCity
///     @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// }
///
/// let people: Results<PersonProjection> = db.objects(PersonProjection.self)
/// let ada = PersonProjection(projecting: person)
/// ```
///
/// A `@Projected` property reads its key path from ``rootObject`` each time,
/// so a projection of a managed object is as live as the object. It can:
///
/// - pass a property through, under the same or another name (`firstName`);
/// - follow a key path into linked or embedded objects (`homeCity`; links are
///   optional in Coffer, so the path uses `?.`);
/// - compute from a property (`lastNameCaps`; read-only);
/// - map a ``List``, ``MutableSet`` or ``LinkingObjects`` of objects to one of
///   their properties with `projectTo` (a live ``ProjectedCollection``).
///
/// Setting a projected property sets the object's property, which for a managed
/// object needs a write transaction, as setting the object's own does. Setting
/// one whose key path cannot be written (a computed value, a path with `?.`)
/// stops the program with a message naming it. Properties of the object that
/// the projection does not declare are not part of it.
///
/// Queries, sorts and aggregates over `Results` of projections take the
/// projection's key paths (`people.where { $0.homeCity == "Lisbon" }`,
/// `sorted(by: \.firstName)`) and run on the stored properties those read; a
/// projected property that computes its value cannot be used there (the
/// program stops, naming it). String queries and sort key paths use the
/// object's property names.
///
/// Projections are reference types that are not `Sendable`, like the objects
/// they wrap.
open class Projection<Root: Object>: _ResultsElement, Equatable, Hashable, CustomStringConvertible {
    /// The object shown.
    public let rootObject: Root

    /// A projection of `object`, managed or not.
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// The database managing the object, or nil while it is unmanaged.
    public var database: Database? {
        rootObject.database
    }

    /// True once the object was deleted; see ``Object/isInvalidated``.
    public var isInvalidated: Bool {
        rootObject.isInvalidated
    }

    public static var _cofferRootType: Object.Type { Root.self }

    public static func _cofferElement(for object: Object) -> Self {
        Self(projecting: unsafeDowncast(object, to: Root.self))
    }

    public var _cofferObject: Object { rootObject }

    /// True when both show the same object (``Object/isSameObject(as:)``).
    public static func == (lhs: Projection, rhs: Projection) -> Bool {
        lhs.rootObject.isSameObject(as: rhs.rootObject)
    }

    /// Hashes the object's identity: its class and key when managed.
    public func hash(into hasher: inout Hasher) {
        if let managed = rootObject.managedState {
            hasher.combine(ObjectIdentifier(managed.database))
            hasher.combine(managed.binding.classId)
            hasher.combine(managed.key)
        } else {
            hasher.combine(ObjectIdentifier(rootObject))
        }
    }

    /// `PersonProjection<Person> { firstName = Ada; homeCity = Optional("Lisbon") }`.
    open var description: String {
        let properties = Mirror(reflecting: self).children.compactMap { child -> String? in
            guard let label = child.label, let projected = child.value as? any ProjectedProperty else { return nil }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            return "\(name) = \(projected.value(of: rootObject))"
        }
        return "\(type(of: self))<\(Root.self)> { \(properties.joined(separator: "; ")) }"
    }
}

/// Declares a property of a ``Projection`` that reads a key path of its root
/// object: `@Projected(\Person.firstName) var firstName`.
@propertyWrapper
public struct Projected<Root: Object, Value> {
    let keyPath: KeyPath<Root, Value>

    /// A property showing the value at `projectedKeyPath` of the projection's object.
    public init(_ projectedKeyPath: KeyPath<Root, Value>) {
        keyPath = projectedKeyPath
    }

    /// Unavailable: `@Projected` works only inside a ``Projection`` subclass.
    @available(*, unavailable, message: "@Projected can only be used in a subclass of Projection")
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used in a subclass of Projection") }
        set { fatalError("@Projected can only be used in a subclass of Projection") }
    }

    /// Reads and writes the key path on the projection's object.
    public static subscript<EnclosingSelf: Projection<Root>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected<Root, Value>>
    ) -> Value {
        get {
            let keyPath = projection[keyPath: storageKeyPath].keyPath
            projection.rootObject.keyPathRecorder?.projectedKeyPath = keyPath
            return projection.rootObject[keyPath: keyPath]
        }
        set {
            let keyPath = projection[keyPath: storageKeyPath].keyPath
            guard let writable = keyPath as? ReferenceWritableKeyPath<Root, Value> else {
                fatalError("Coffer: \(EnclosingSelf.self) cannot set a projected property whose key path \(keyPath) is read-only")
            }
            projection.rootObject[keyPath: writable] = newValue
        }
    }
}

/// A `@Projected` found by Mirror, for ``Projection/description``.
protocol ProjectedProperty {
    func value(of root: Object) -> Any
}

extension Projected: ProjectedProperty {
    func value(of root: Object) -> Any {
        (root as! Root)[keyPath: keyPath]
    }
}
