// The sync session of a database opened with a SyncConfiguration.

extension Database {
    /// The database's sync session, nil when its configuration has no
    /// ``Configuration/syncConfiguration``. See ``SyncSession``.
    public var syncSession: SyncSession? {
        configuration.syncConfiguration == nil ? nil : SyncSession(sharedHandle)
    }
}
