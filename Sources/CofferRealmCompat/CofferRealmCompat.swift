// CofferRealmCompat: Realm Swift's own names for Coffer's, so that Realm code
// compiles by changing only `import RealmSwift` to `import CofferRealmCompat`.
// Coffer's names follow one rule (every Realm/realm in a public name becomes
// Database/database, AnyRealmValue is AnyValue, RealmCollectionChange is
// CollectionChange); this module adds the Realm spellings back as type aliases
// and thin forwarding members, and re-exports Coffer.

@_exported import Coffer
import Foundation

/// Realm's name for ``Database``: `try Realm()`, `Realm.Configuration`,
/// `Realm.Error`, `Realm.UpdatePolicy`, `Realm.deleteFiles(for:)`.
public typealias Realm = Database

/// Realm's name for ``AnyValue``.
public typealias AnyRealmValue = AnyValue

/// Realm's name for ``DatabaseCollection``.
public typealias RealmCollection = DatabaseCollection

/// Realm's name for ``AnyDatabaseCollection``.
public typealias AnyRealmCollection<Element> = AnyDatabaseCollection<Element>

/// Realm's name for ``DatabaseProperty``: `let age = RealmProperty<Int?>()`.
public typealias RealmProperty<Value: _Persistable> = DatabaseProperty<Value>

/// Realm's name for ``DatabaseCollectionValue``.
public typealias RealmCollectionValue = DatabaseCollectionValue

/// Realm's name for ``CollectionChange``, what collection observers are told.
public typealias RealmCollectionChange<CollectionType> = CollectionChange<CollectionType>

/// Realm's name for ``DatabaseMapChange``, what map observers are told.
public typealias RealmMapChange<Collection> = DatabaseMapChange<Collection>

extension Object {
    /// Realm's name for ``Object/database``: the database managing this object,
    /// nil while it is unmanaged.
    public var realm: Realm? { database }
}

extension DatabaseCollection {
    /// Realm's name for `database`: the database managing this collection,
    /// nil while it is unmanaged.
    public var realm: Realm? { database }
}

extension Map {
    /// Realm's name for ``Map/database``.
    public var realm: Realm? { database }
}

extension Database.Configuration {
    /// Realm's name for ``Database/Configuration/deleteDatabaseIfMigrationNeeded``.
    public var deleteRealmIfMigrationNeeded: Bool {
        get { deleteDatabaseIfMigrationNeeded }
        set { deleteDatabaseIfMigrationNeeded = newValue }
    }

    /// A configuration with Realm's argument labels; every argument has the
    /// default a Realm configuration has.
    public init(
        fileURL: URL? = nil,
        inMemoryIdentifier: String? = nil,
        encryptionKey: Data? = nil,
        readOnly: Bool = false,
        schemaVersion: UInt64 = 0,
        migrationBlock: MigrationBlock? = nil,
        deleteRealmIfMigrationNeeded: Bool,
        shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil,
        objectTypes: [Object.Type]? = nil,
        seedFilePath: URL? = nil
    ) {
        self.init(fileURL: fileURL, inMemoryIdentifier: inMemoryIdentifier, encryptionKey: encryptionKey,
                  readOnly: readOnly, schemaVersion: schemaVersion, migrationBlock: migrationBlock,
                  deleteDatabaseIfMigrationNeeded: deleteRealmIfMigrationNeeded,
                  shouldCompactOnLaunch: shouldCompactOnLaunch, objectTypes: objectTypes, seedFilePath: seedFilePath)
    }
}

extension Results where Element: _ResultsValue {
    /// Realm's name for `database`: the database of the list whose values
    /// these are, nil for an unmanaged list.
    public var realm: Realm? { database }
}
