// LiveResultsStore: the Observable heart of ObservedResults and
// ObservedSectionedResults: it opens the database when first read, builds
// the results, observes them, and tells Observation once per commit that
// changed them.

import Foundation
import Observation

/// Live results kept up to date, observable through Swift's Observation:
/// reading ``results`` inside `withObservationTracking` (or a SwiftUI view's
/// body) registers a dependency, and each commit that changed the results
/// (as their observer reports it, key paths considered) is one mutation.
public final class LiveResultsStore<Element: Object>: Observable {
    private let registrar = ObservationRegistrar()
    private let build: (Database) -> Results<Element>
    private let keyPaths: [String]?
    /// The configuration given to the wrapper; nil for the environment's.
    let configuration: Database.Configuration?
    /// The environment's configuration, set by SwiftUI before the first read.
    var environmentConfiguration: Database.Configuration?
    private var opened: (results: Results<Element>, token: NotificationToken)?
    private var failure: (any Swift.Error)?

    /// ``DatabaseEnvironment/configuration`` when the wrapper was made.
    private let taskConfiguration = DatabaseEnvironment.configuration

    init(configuration: Database.Configuration?, keyPaths: [String]?, build: @escaping (Database) -> Results<Element>) {
        self.configuration = configuration
        self.keyPaths = keyPaths
        self.build = build
    }

    deinit {
        opened?.token.invalidate()
    }

    /// The live results, opening the database on first use (on the calling
    /// thread, which the database is then confined to).
    public var results: Results<Element> {
        registrar.access(self, keyPath: \.results)
        return open().results
    }

    /// The database the results are read from.
    public var database: Database { open().results.database }

    private func open() -> (results: Results<Element>, token: NotificationToken) {
        if let opened { return opened }
        let database: Database
        do {
            database = try Database(configuration: configuration ?? environmentConfiguration ?? taskConfiguration ?? .defaultConfiguration)
        } catch {
            fatalError("ObservedResults could not open its database: \(error)")
        }
        let results = build(database)
        let baseline = InitialBaseline(database)
        let token = results.observation(keyPaths).observe(on: nil, { raw, _, _ in raw }) { [weak self] raw in
            guard let self else { return }
            switch raw {
            case .collection:
                self.registrar.withMutation(of: self, keyPath: \.results) {}
            case .initial(let version):
                // A commit before the first call is folded into it.
                if baseline.includesCommits(version) {
                    self.registrar.withMutation(of: self, keyPath: \.results) {}
                }
            case .object, .map, .database, .error:
                break
            }
        }
        opened = (results, token)
        return (results, token)
    }
}
