// Database.Configuration: where a database lives and how it is opened, the
// process-wide default, and turning it into a C configuration.

import Foundation
internal import CCoffer

extension Database {
    /// Where a database lives and how it is opened: a `Sendable` value.
    ///
    /// ```swift
    /// var config = Database.Configuration()
    /// config.fileURL = URL(fileURLWithPath: "dogs.coffer")
    /// config.encryptionKey = key          // 64 bytes
    /// config.schemaVersion = 2
    /// config.objectTypes = [Dog.self, Person.self]
    /// let db = try Database(configuration: config)
    /// ```
    ///
    /// A configuration holds only values, class metatypes, which never change,
    /// and `@Sendable` closures, so it is `Sendable` and can be shared between
    /// threads and tasks, each of which opens its own ``Database`` from it.
    public struct Configuration: Sendable {
        private enum Location: Sendable {
            case file(URL)
            case inMemory(String)
        }

        private var location: Location

        /// The database file. Setting it clears ``inMemoryIdentifier``; setting nil
        /// returns to the default file. nil while the configuration is in-memory.
        ///
        /// The default is `default.coffer` in the current directory (the C core's
        /// default path, `coffer_default_path()`). The lock file is the path plus
        /// `-lock`.
        public var fileURL: URL? {
            get {
                if case .file(let url) = location { return url }
                return nil
            }
            set { location = .file(newValue ?? Self.defaultFileURL) }
        }

        /// An in-memory database shared by every ``Database`` of this process opened
        /// with the same identifier, and discarded when the last of them is
        /// released; no file is written. Setting it clears ``fileURL``; setting nil
        /// returns to the default file.
        public var inMemoryIdentifier: String? {
            get {
                if case .inMemory(let identifier) = location { return identifier }
                return nil
            }
            set { location = newValue.map(Location.inMemory) ?? .file(Self.defaultFileURL) }
        }

        /// A 64-byte key that encrypts everything written, or nil for no encryption.
        /// Opening fails with `.invalidArgument` for any other length, `.wrongKey`
        /// for a key that does not open the file, `.keyRequired` or `.notEncrypted`
        /// when the key's presence does not match the file.
        public var encryptionKey: Data?

        /// Opens the file read-only: it must exist, and every write throws
        /// `.readOnly`.
        public var readOnly: Bool

        /// The version of ``objectTypes``. When the classes differ from the file's,
        /// a higher version applies the change (new classes and properties, removed
        /// properties, changed indexes) at open; the same version throws
        /// `.migrationRequired`, a lower one `.schemaVersion`. Without
        /// ``objectTypes`` the file's stored schema and version are used.
        public var schemaVersion: UInt64

        /// Upgrades the file's objects when ``schemaVersion`` is higher than the
        /// file's; see ``MigrationBlock``. Without one, a higher version applies the
        /// new schema on its own: added properties get defaults, removed ones are
        /// dropped. It is not called for a new file or with
        /// ``deleteDatabaseIfMigrationNeeded``.
        public var migrationBlock: MigrationBlock?

        /// Deletes the file and starts afresh when opening would need a migration:
        /// the schema version differs from the file's (higher or lower), or the
        /// classes differ at the same version. For caches and development. A file
        /// that this process has open is never deleted (`.busy`). Cannot be
        /// combined with ``readOnly``.
        public var deleteDatabaseIfMigrationNeeded: Bool

        /// Decides whether to compact the file when it is first opened in this
        /// process. It gets the file's size and the bytes holding data
        /// (`totalBytes`, `usedBytes`); returning true replaces the file by a
        /// compacted copy of itself (same contents and key) unless another process
        /// has it open. Not called for in-memory databases; cannot be combined with
        /// ``readOnly``.
        ///
        /// ```swift
        /// config.shouldCompactOnLaunch = { totalBytes, usedBytes in
        ///     totalBytes > 100 * 1024 * 1024 && Double(usedBytes) / Double(totalBytes) < 0.5
        /// }
        /// ```
        ///
        /// `@Sendable` because the configuration is a `Sendable` value: the
        /// closure runs on whichever thread opens a database with it.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?

        /// The most versions of the file that may be alive at once, or nil for no
        /// limit. Every commit makes a new version, and a version stays alive while
        /// a read of any ``Database`` or process still sees it, keeping its pages
        /// from reuse. Beginning a write that would go above the limit throws
        /// ``CofferError`` `.limit`; ``Database/refresh()`` the readers (or release
        /// them) and retry. 0 means no limit, as nil.
        public var maximumNumberOfActiveVersions: UInt?

        /// The classes the database stores. They are written to the file's schema
        /// (added classes are created, at any version), and only these are visible
        /// through the database; other classes in the file stay untouched.
        ///
        /// nil or an empty list means, as in Realm, every ``Object`` subclass of the
        /// program, found from the Swift type metadata: the classes the file has
        /// keep their stored shape (nothing is migrated), and the program's classes
        /// the file lacks are added to it. A class is not added when another class
        /// of the program has the same name, when it declares a required link, or
        /// when a class it links to cannot be added; using it stops the program
        /// with a message saying to list it here. A read-only database sees only
        /// the file's classes.
        public var objectTypes: [Object.Type]?

        /// A file copied to ``fileURL`` when the database is opened and no file
        /// exists there yet, to ship prepared data with an app.
        public var seedFilePath: URL?

        /// Whether opening checks the whole file first, as
        /// ``Database/verify(configuration:)`` does, and refuses a damaged one
        /// with ``CofferError`` `.corrupted` naming the first finding. For files
        /// from outside; it reads the whole file. A ``seedFilePath`` file is always
        /// checked before it is copied. False by default.
        public var verifyOnOpen: Bool = false

        /// How much a commit that returned survives a system crash (an
        /// application crash loses none at any level): ``Database/Durability/full``
        /// by default, ``Database/Durability/normal`` or ``Database/Durability/none``
        /// to flush less. Every ``Database`` of one file in a process that can
        /// write must use the same level: opening one with another throws
        /// ``CofferError`` `.busy` naming both. Read-only and in-memory databases
        /// ignore it.
        public var durability: Durability = .full

        /// Syncs the database with a `coffer-sync` service, as Realm's
        /// `syncConfiguration`; nil (the default) for a local database. See
        /// ``SyncConfiguration`` and ``Database/syncSession``.
        public var syncConfiguration: SyncConfiguration?

        /// A configuration; every argument has the default a Realm configuration has.
        /// An `inMemoryIdentifier` takes precedence over `fileURL`; `sync` sets
        /// ``syncConfiguration``.
        public init(
            fileURL: URL? = nil,
            inMemoryIdentifier: String? = nil,
            encryptionKey: Data? = nil,
            readOnly: Bool = false,
            schemaVersion: UInt64 = 0,
            migrationBlock: MigrationBlock? = nil,
            deleteDatabaseIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil,
            objectTypes: [Object.Type]? = nil,
            seedFilePath: URL? = nil,
            maximumNumberOfActiveVersions: UInt? = nil,
            sync: SyncConfiguration? = nil
        ) {
            if let inMemoryIdentifier {
                location = .inMemory(inMemoryIdentifier)
            } else {
                location = .file(fileURL ?? Self.defaultFileURL)
            }
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteDatabaseIfMigrationNeeded = deleteDatabaseIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.maximumNumberOfActiveVersions = maximumNumberOfActiveVersions
            self.objectTypes = objectTypes
            self.seedFilePath = seedFilePath
            self.syncConfiguration = sync
        }

        private static let storedDefault = LockedValue(Configuration())

        /// The configuration `try Database()` opens. Setting it affects databases
        /// opened afterwards; it is safe to read and set from any thread.
        public static var defaultConfiguration: Configuration {
            get { storedDefault.withLock { $0 } }
            set { storedDefault.withLock { $0 = newValue } }
        }

        /// `default.coffer` in the current directory, as the C core's default path.
        static var defaultFileURL: URL {
            URL(fileURLWithPath: String(cString: coffer_default_path()))
        }

        /// The absolute path of the file, nil when in-memory.
        func filePath() throws(CofferError) -> String? {
            guard case .file(let url) = location else { return nil }
            return try Self.path(of: url, role: "fileURL")
        }

        private static func path(of url: URL, role: String) throws(CofferError) -> String {
            guard url.isFileURL else {
                throw CofferError(.invalidArgument, "\(role) '\(url)' is not a file URL")
            }
            let resolved = url.standardizedFileURL.resolvingSymlinksInPath()
            return resolved.withUnsafeFileSystemRepresentation { String(cString: $0!) }
        }

        /// A C configuration for this one; the caller frees it.
        func makeCConfig(path: String?) throws(CofferError) -> OpaquePointer {
            var created: OpaquePointer?
            try CofferError.check(coffer_config_new(&created))
            let config = created!
            do throws(CofferError) {
                if let path {
                    try CofferError.check(coffer_config_set_path(config, path))
                } else if let inMemoryIdentifier {
                    try CofferError.check(coffer_config_set_in_memory_identifier(config, inMemoryIdentifier))
                }
                try CofferError.check(coffer_config_set_read_only(config, readOnly ? 1 : 0))
                try CofferError.check(coffer_config_set_delete_if_migration_needed(config, deleteDatabaseIfMigrationNeeded ? 1 : 0))
                try CofferError.check(coffer_config_set_verify_on_open(config, verifyOnOpen ? 1 : 0))
                try CofferError.check(coffer_config_set_durability(config, durability.cValue))
                if let maximumNumberOfActiveVersions {
                    try CofferError.check(coffer_config_set_max_active_versions(config, UInt64(maximumNumberOfActiveVersions)))
                }
                if let seedFilePath {
                    try CofferError.check(coffer_config_set_seed_path(config, try Self.path(of: seedFilePath, role: "seedFilePath")))
                }
                if let encryptionKey {
                    // An empty key would reach the C core as "no key" and open unencrypted.
                    guard !encryptionKey.isEmpty else {
                        throw CofferError(.invalidArgument, "encryptionKey must be \(coffer_encryption_key_size()) bytes, got 0")
                    }
                    let status = encryptionKey.withUnsafeBytes { coffer_config_set_encryption_key(config, $0.baseAddress, $0.count) }
                    try CofferError.check(status)
                }
                try syncConfiguration?.install(on: config)
                let types = uniqueObjectTypes
                if !types.isEmpty {
                    var schemas: [ModelSchema] = []
                    for type in types {
                        schemas.append(try ModelSchema.of(type))
                    }
                    let schema = CSchema(schemas)
                    try CofferError.check(coffer_config_set_schema(config, schema.classes.baseAddress, schema.count, schemaVersion))
                }
            } catch {
                coffer_config_free(config)
                throw error
            }
            return config
        }

        /// ``objectTypes`` without repeats, in order.
        private var uniqueObjectTypes: [Object.Type] {
            var seen = Set<ObjectIdentifier>()
            return (objectTypes ?? []).filter { seen.insert(ObjectIdentifier($0)).inserted }
        }
    }
}
