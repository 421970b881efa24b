// Options every command that opens a file shares: the file and where its
// key comes from.

import ArgumentParser

struct FileOptions: ParsableArguments {
    @Argument(help: "The database file.")
    var file: String

    @Option(name: .customLong("key-file"),
            help: "A file holding the 64-byte encryption key (128 hex digits or 64 raw bytes). Default: $COFFER_KEY.")
    var keyFile: String?

    func key() throws -> EncryptionKey? {
        try EncryptionKey.load(keyFile: keyFile)
    }

    /// Opens the file read-only with its stored schema.
    func open() throws -> Database {
        try Database(path: file, key: key())
    }
}
