// Frozen: a frozen object, results or collection as a Sendable value, for
// passing frozen data where Swift 6 asks for Sendable (tasks, actors).

/// A frozen object, projection, ``Results`` or collection that Swift lets cross threads
/// and actors: `Sendable` because what it holds is frozen (its initializer
/// freezes a live value), so it never changes and every read of it is
/// serialized by its database.
///
/// ```swift
/// let dogs = Frozen(db.objects(Dog.self))
/// await withTaskGroup(of: Int.self) { group in
///     for _ in 0..<8 { group.addTask { dogs.value.count } }
/// }
/// let rex = Frozen(rexObject)
/// Task.detached { print(rex.name) }   // members read through it
/// ```
///
/// `@unchecked Sendable` because `Value` (an ``Object`` subclass, ``Results``,
/// ``List``…) is not `Sendable` in general; a frozen one is immutable and its
/// database takes a lock around each read.
@dynamicMemberLookup
public struct Frozen<Value: ThreadConfined>: @unchecked Sendable {
    /// The frozen value.
    public let value: Value

    /// `value` frozen (see ``ThreadConfined/freeze()``); a frozen value as it is.
    public init(_ value: Value) {
        self.value = value.freeze()
    }

    /// A member of the frozen value: `frozenDog.name`.
    public subscript<Member>(dynamicMember keyPath: KeyPath<Value, Member>) -> Member {
        value[keyPath: keyPath]
    }
}
