// LiveObjectStore: the Observable heart of ObservedDatabaseObject: it
// observes one object and tells Observation once per commit that changed it
// (or deleted it).

import Foundation
import Observation

/// One object kept up to date, observable through Swift's Observation:
/// reading ``object`` inside `withObservationTracking` (or a SwiftUI view's
/// body) registers a dependency, and each commit that changed one of its
/// observed properties, or deleted it, is one mutation.
public final class LiveObjectStore<ObjectType: Object>: Observable {
    private let registrar = ObservationRegistrar()
    private let observed: ObjectType
    private var token: NotificationToken?

    /// Observes `object` if it is managed and live (an unmanaged or frozen
    /// object never changes by a commit); with `keyPaths`, only changes of
    /// those properties count.
    init(_ object: ObjectType, keyPaths: [String]?) {
        observed = object
        guard object.database != nil, !object.isFrozen, !object.isInvalidated else { return }
        let database = object.database!
        let baseline = InitialBaseline(database)
        token = object.objectObservation(keyPaths).observation.observe(on: nil, { raw, _, _ in raw }) { [weak self] raw in
            guard let self else { return }
            switch raw {
            case .object:
                self.registrar.withMutation(of: self, keyPath: \.object) {}
            case .initial(let version):
                // A commit before the first call is folded into it.
                if baseline.includesCommits(version) {
                    self.registrar.withMutation(of: self, keyPath: \.object) {}
                }
            case .collection, .map, .database, .error:
                break
            }
        }
    }

    deinit {
        token?.invalidate()
    }

    /// The object; reading it registers a dependency with Observation.
    public var object: ObjectType {
        registrar.access(self, keyPath: \.object)
        return observed
    }

    /// The object, without registering a dependency.
    var untracked: ObjectType { observed }
}
