// Observing with typed key paths, as Realm Swift's `PartialKeyPath`
// overloads: each key path becomes the dotted path of the Swift property
// names it reads, and the observation is the one of those names.

import Foundation

extension KeyPathNames {
    /// The dotted Swift names `keyPaths` read from `root` (`\Dog.owner?.name`
    /// gives `owner.name`); a key path that is not a chain of persisted
    /// properties stops the program, naming it.
    static func observedNames(_ keyPaths: [AnyKeyPath], from root: any _ResultsElement.Type) -> [String] {
        keyPaths.map { keyPath in
            properties(of: keyPath, from: root, use: "observers' key paths")
                .map(\.name).joined(separator: ".")
        }
    }
}

extension _ObjectObservable where Self: Object {
    /// `observe(keyPaths:on:_:)` with typed key paths:
    /// `dog.observe(keyPaths: [\Dog.name, \Dog.owner?.name]) { ... }`, as
    /// Realm's `observe(keyPaths:on:_:)` with `PartialKeyPath`s. A key path
    /// that is not a chain of `@Persisted` properties stops the program,
    /// naming it.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Self.self), on: queue, block)
    }

    /// The actor form of the typed key paths' `observe`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Self>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Self.self), on: actor, block)
    }

    /// `changes(keyPaths:)` with typed key paths.
    public func changes(keyPaths: [PartialKeyPath<Self>]) -> ChangeSequence<ObjectChange<Self>> {
        changes(keyPaths: KeyPathNames.observedNames(keyPaths, from: Self.self))
    }
}

extension Results where Element: _ResultsElement {
    /// `observe(keyPaths:on:_:)` with typed key paths from the element
    /// class (a projection's key paths lead to its object's properties):
    /// `dogs.observe(keyPaths: [\.name, \.owner?.name]) { ... }`. A key path
    /// that is not a chain of `@Persisted` properties stops the program,
    /// naming it.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: queue, block)
    }

    /// The actor form of the typed key paths' `observe`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: actor, block)
    }

    /// `changes(keyPaths:)` with typed key paths.
    public func changes(keyPaths: [PartialKeyPath<Element>]) -> ChangeSequence<CollectionChange<Results<Element>>> {
        changes(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self))
    }
}

extension List where Element: Object {
    /// `observe(keyPaths:on:_:)` with typed key paths from the element
    /// class: `person.dogs.observe(keyPaths: [\.name]) { ... }`.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: queue, block)
    }

    /// The actor form of the typed key paths' `observe`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<List<Element>>) -> Void) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: actor, block)
    }
}

extension MutableSet where Element: Object {
    /// `observe(keyPaths:on:_:)` with typed key paths from the element class.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: queue, block)
    }

    /// The actor form of the typed key paths' `observe`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<MutableSet<Element>>) -> Void) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: actor, block)
    }
}

extension LinkingObjects {
    /// `observe(keyPaths:on:_:)` with typed key paths from the linking class.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: queue, block)
    }

    /// The actor form of the typed key paths' `observe`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<LinkingObjects<Element>>) -> Void) async -> NotificationToken {
        await observe(keyPaths: KeyPathNames.observedNames(keyPaths, from: Element.self), on: actor, block)
    }
}
