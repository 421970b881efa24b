// The default configuration of the observed wrappers and openers, passed
// down as SwiftUI's environment where it exists and as a task-local value
// everywhere.

import Foundation

/// Where the observed wrappers (``ObservedResults``,
/// ``ObservedSectionedResults``) and ``AsyncOpen`` find the configuration
/// to open when they are given none.
///
/// ```swift
/// try await DatabaseEnvironment.$configuration.withValue(config) {
///     let model = TodoModel()   // its @ObservedResults open `config`
/// }
/// ```
///
/// Where SwiftUI exists, `.environment(\.databaseConfiguration, config)` sets
/// it for a view and those under it.
public enum DatabaseEnvironment {
    /// The configuration set for the current task; nil when none is, and
    /// then ``Database/Configuration/defaultConfiguration`` is used.
    @TaskLocal public static var configuration: Database.Configuration?

    /// `configuration` when given, else the one set for the current task,
    /// else the default one.
    static func resolve(_ configuration: Database.Configuration?) -> Database.Configuration {
        configuration ?? Self.configuration ?? .defaultConfiguration
    }
}

#if canImport(SwiftUI)
import SwiftUI

private struct DatabaseConfigurationKey: EnvironmentKey {
    static var defaultValue: Database.Configuration { DatabaseEnvironment.configuration ?? .defaultConfiguration }
}

extension EnvironmentValues {
    /// The configuration the observed wrappers and ``AsyncOpen`` of the
    /// views under this one open, as Realm's `\.realmConfiguration`.
    public var databaseConfiguration: Database.Configuration {
        get { self[DatabaseConfigurationKey.self] }
        set { self[DatabaseConfigurationKey.self] = newValue }
    }
}
#endif
