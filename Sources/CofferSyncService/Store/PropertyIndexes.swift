// The bounded keys of the indexes on coffer_sync_properties' `value` and
// `txt` (schema version 6). A btree row holds at most about 2.7 kB, so the
// indexes keep a prefix of each value: the first `valueBytes` bytes of the
// encoding, the first `textCharacters` characters of the text. A query
// compares the prefix (which the index answers) and then the whole value
// (the exact recheck); the same expressions here and in the index
// definitions let PostgreSQL match them.
enum PropertyIndexes {
    /// Bytes of the wire encoding that coffer_sync_properties_by_value keeps.
    static let valueBytes = 1024
    /// Characters of the text that coffer_sync_properties_by_txt keeps (at
    /// most 4 bytes each in UTF-8).
    static let textCharacters = 256

    /// The indexed prefix of the bytea `expression`.
    static func valuePrefix(_ expression: String) -> String {
        "substring(\(expression) FROM 1 FOR \(valueBytes))"
    }

    /// The indexed prefix of the text `expression`.
    static func textPrefix(_ expression: String) -> String {
        "left(\(expression), \(textCharacters))"
    }
}
