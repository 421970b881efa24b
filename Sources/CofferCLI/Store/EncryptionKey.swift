// Where a 64-byte encryption key comes from: a key file (128 hex digits or
// 64 raw bytes) or the COFFER_KEY environment variable (hex). Keys never
// come from the command line itself, where other users could read them.

import Foundation

/// A 64-byte key and a phrase naming where it came from, for error messages.
struct EncryptionKey {
    static let size = 64
    static let environmentVariable = "COFFER_KEY"

    let bytes: [UInt8]
    let source: String

    /// The key of `--key-file`, else of COFFER_KEY, else nil.
    /// - Throws: ``CLIError`` naming the source when it cannot be read or is
    ///   not a key.
    static func load(keyFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> EncryptionKey?
    {
        if let keyFile {
            return try fromFile(keyFile)
        }
        if let hex = environment[environmentVariable] {
            let source = "the \(environmentVariable) environment variable"
            guard let bytes = decodeHex(hex.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw CLIError("\(source) is not a key: expected \(size * 2) hex digits, found \(hex.count) characters")
            }
            return EncryptionKey(bytes: bytes, source: source)
        }
        return nil
    }

    /// Reads a key file: exactly 64 bytes are the raw key; otherwise the file
    /// must hold 128 hex digits (surrounding white space allowed).
    static func fromFile(_ path: String) throws -> EncryptionKey {
        let source = "key file \(path)"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("cannot read \(source)")
        }
        if data.count == size {
            return EncryptionKey(bytes: [UInt8](data), source: source)
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = decodeHex(text) else {
            throw CLIError("\(source) is not a key: expected \(size) raw bytes or \(size * 2) hex digits, found \(data.count) bytes")
        }
        return EncryptionKey(bytes: bytes, source: source)
    }

    /// The 64 bytes of 128 hex digits, or nil.
    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == size * 2 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(size)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
