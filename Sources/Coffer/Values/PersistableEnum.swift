// PersistableEnum: enums stored through their raw value.

/// An enum that a ``Persisted`` property can store, through its raw value.
///
/// The raw value type must itself be storable (`Int`, `String`, ...). A property
/// declared without an initial value starts as the first case.
///
/// ```swift
/// enum TaskStatus: String, PersistableEnum {
///     case notStarted, inProgress, complete
/// }
///
/// final class Task: Object {
///     @Persisted var name = ""
///     @Persisted var status = TaskStatus.notStarted
/// }
/// ```
///
/// A stored raw value that is not one of the cases (written by another program)
/// cannot be read: reading the property stops the program with a message naming it.
///
/// A ``Query`` compares an enum property by raw value: `$0.status == .complete`.
public protocol PersistableEnum: _PersistableInsideOptional, _QueryEquatable, _ResultsValue, RawRepresentable, CaseIterable
where RawValue: _PersistableInsideOptional {}

extension PersistableEnum {
    public static var _cofferKind: _ValueKind { RawValue._cofferKind }
    public static func _cofferDefaultValue() -> Self {
        guard let first = allCases.first else {
            preconditionFailure("PersistableEnum \(Self.self) has no cases")
        }
        return first
    }
    public static func _cofferDecode(_ stored: _StoredValue) -> Self? {
        RawValue._cofferDecode(stored).flatMap(Self.init(rawValue:))
    }
    /// The case itself, or its raw value.
    public static func _cofferCast(_ value: Any) -> Self? {
        if let v = value as? Self { return v }
        return RawValue._cofferCast(value).flatMap(Self.init(rawValue:))
    }
    public var _cofferEncoded: _StoredValue { rawValue._cofferEncoded }
}
