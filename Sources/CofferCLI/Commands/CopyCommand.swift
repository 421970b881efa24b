// `coffer compact FILE` and `coffer copy SRC DST [--encrypt|--decrypt|
// --rekey]`: write-copies through the core, which writes the copy beside
// its destination and renames it into place only when it is complete.

import ArgumentParser
import CCoffer
import Foundation

struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite a file without its free pages (in place; skipped while another process has it open).")

    @OptionGroup var options: FileOptions

    func run() throws {
        let before = try CompactCommand.fileSize(options.file)
        final class Asked { var asked = false }
        let asked = Asked()
        let db = try Database(path: options.file, key: options.key(), readOnly: false) { config in
            try check(coffer_config_set_should_compact_on_launch(config, { _, _, ctx in
                Unmanaged<Asked>.fromOpaque(ctx!).takeUnretainedValue().asked = true
                return 1
            }, Unmanaged.passUnretained(asked).toOpaque()))
        }
        withExtendedLifetime(db) {}
        let after = try CompactCommand.fileSize(options.file)
        guard asked.asked else {
            throw CLIError("\(options.file) is already open in this process; it was not compacted")
        }
        if after == before {
            Output.line("\(options.file): \(before) bytes (not compacted: in use by another process, or nothing to drop)")
        } else {
            Output.line("\(options.file): \(before) -> \(after) bytes")
        }
    }

    static func fileSize(_ path: String) throws -> UInt64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = attributes[.size] as? NSNumber else { throw CLIError("no such file: \(path)") }
        return size.uint64Value
    }
}

struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Write a compacted copy of a file, keeping, adding, removing or changing its encryption.",
        discussion: """
            Without a flag the copy keeps the source's key (or stays plain). --encrypt writes an \
            encrypted copy of a plain file and --rekey a copy under another key, both with the key \
            of --new-key-file; --decrypt writes a plain copy. DST must not exist.
            """)

    @OptionGroup var options: FileOptions

    @Argument(help: "The copy to write (must not exist).")
    var destination: String

    @Flag(help: "Encrypt the copy with the key of --new-key-file.")
    var encrypt = false

    @Flag(help: "Write a plain copy of an encrypted file.")
    var decrypt = false

    @Flag(help: "Encrypt the copy with the key of --new-key-file instead of the source's key.")
    var rekey = false

    @Option(name: .customLong("new-key-file"), help: "A file holding the copy's key (128 hex digits or 64 raw bytes).")
    var newKeyFile: String?

    func validate() throws {
        if [encrypt, decrypt, rekey].filter({ $0 }).count > 1 {
            throw ValidationError("give at most one of --encrypt, --decrypt and --rekey")
        }
        if (encrypt || rekey) && newKeyFile == nil {
            throw ValidationError("--\(encrypt ? "encrypt" : "rekey") needs --new-key-file")
        }
        if newKeyFile != nil && !(encrypt || rekey) {
            throw ValidationError("--new-key-file goes with --encrypt or --rekey")
        }
    }

    func run() throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw CLIError("\(destination) exists; the copy is never written over a file")
        }
        let key = try options.key()
        let db = try Database(path: options.file, key: key)
        if encrypt && db.isEncrypted { throw CLIError("\(options.file) is already encrypted; use --rekey") }
        if (decrypt || rekey) && !db.isEncrypted { throw CLIError("\(options.file) is not encrypted; use --encrypt") }
        let newKey: [UInt8]? = try {
            if encrypt || rekey { return try newKeyFile.map { try EncryptionKey.fromFile($0).bytes } }
            if decrypt { return nil }
            return key?.bytes
        }()
        if Output.stderrIsTerminal { Output.error("copying \(options.file) to \(destination)…") }
        let status = newKey.map { k in k.withUnsafeBytes { coffer_db_write_copy(db.handle, destination, $0.baseAddress, $0.count) } }
            ?? coffer_db_write_copy(db.handle, destination, nil, 0)
        try check(status, "copy to \(destination)")
    }
}
