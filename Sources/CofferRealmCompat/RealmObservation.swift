// Realm's names for the UI observation types: @ObservedRealmObject and the
// environment's \.realmConfiguration.

import Coffer
#if canImport(SwiftUI)
import SwiftUI
#endif

/// Realm's name for ``ObservedDatabaseObject``: `@ObservedRealmObject var todo: Todo`.
public typealias ObservedRealmObject<ObjectType: Object> = ObservedDatabaseObject<ObjectType>

#if canImport(SwiftUI)
extension EnvironmentValues {
    /// Realm's name for `\.databaseConfiguration`.
    public var realmConfiguration: Realm.Configuration {
        get { databaseConfiguration }
        set { databaseConfiguration = newValue }
    }
}
#endif
