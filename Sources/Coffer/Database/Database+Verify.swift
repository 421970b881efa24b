// Database verification: the integrity check of a database file
// (coffer_verify), its findings as Swift values, and checking the file of an
// open database.

import Foundation
internal import CCoffer

extension Database {
    /// One thing wrong with a database file, as ``Database/verify(configuration:)``
    /// reports it.
    public struct VerificationFinding: Sendable, Hashable, CustomStringConvertible {
        /// What a finding is about.
        public enum Kind: Int, Sendable, Hashable {
            /// The file as a whole: too short for the pages in use, not a database.
            case file = 1
            /// One of the storage engine's two meta pages.
            case metaPage
            /// A page header: page number, type, free-space bounds, depth.
            case pageHeader
            /// A node on a page: offset, key or data size, flags, child page.
            case node
            /// Keys out of order.
            case keyOrder
            /// The pages of a value stored outside its leaf page.
            case overflowPages
            /// A page reached twice.
            case pageUsedTwice
            /// The storage engine's list of free pages.
            case freeList
            /// A tree's depth or counts differ from its pages, or pages belong to nothing.
            case tree
            /// The database header or the stored schema.
            case databaseHeader
            /// A stored object that does not decode or authenticate.
            case record
            /// An index entry missing, extra or wrong.
            case index
            /// A primary key shared, or not found by a lookup.
            case primaryKey
            /// A link to an object that does not exist.
            case link
            /// A backlink count that differs from the stored links.
            case backlink
            /// A list, set or map.
            case collection
            /// An object-key or collection-id counter behind the keys in use.
            case counter
            /// A change-log entry that does not decode.
            case changeLog
        }

        /// What the finding is about.
        public let kind: Kind
        /// The page of the file, or nil when the finding is not tied to one page.
        public let page: UInt64?
        /// The class of the object concerned, if any.
        public let className: String?
        /// The key of the object concerned, if any.
        public let objectKey: UInt64?
        /// What is wrong, in English.
        public let message: String

        public var description: String {
            var place = page.map { "page \($0)" } ?? "no page"
            if let className { place += ", \(className)" + (objectKey.map { " #\($0)" } ?? "") }
            return "\(String(cString: coffer_verify_kind_name(coffer_verify_kind(rawValue: UInt32(kind.rawValue))))) (\(place)): \(message)"
        }
    }

    /// Checks the database file (or in-memory database open in this process)
    /// that `configuration` names, with its `encryptionKey`, and returns what is
    /// wrong with it: an empty array when it is sound. Other settings are
    /// ignored.
    ///
    /// The storage engine's pages are read with a bounds-checked reader of
    /// their layout (meta pages, page headers, nodes, key order, overflow
    /// pages, the free list, every sub-database); if they are sound, the file
    /// is opened with its stored schema (a missing or damaged one is a
    /// finding), every object is decoded (authenticated, when encrypted) and
    /// indexes, primary keys, links, backlinks, counters and the change log
    /// are checked against the data. The file may be open in this or other
    /// processes. A damaged file gives findings, never a crash. It reads the
    /// whole file.
    ///
    /// ```swift
    /// let findings = try Database.verify(configuration: .init(fileURL: url))
    /// for finding in findings { print(finding) }
    /// ```
    ///
    /// - Throws: ``CofferError``: `.notFound` (no such file or in-memory
    ///   database), `.keyRequired`, `.wrongKey`, `.notEncrypted` (the key does
    ///   not fit the file), `.formatVersion` (a format this library does not
    ///   read), `.readOnly` (no lock file can be made beside the file), `.io`,
    ///   `.noMemory`.
    public static func verify(configuration: Configuration) throws -> [VerificationFinding] {
        let config = try configuration.makeCConfig(path: try configuration.filePath())
        defer { coffer_config_free(config) }
        var report: OpaquePointer?
        try CofferError.check(coffer_verify(config, &report))
        return findings(of: report)
    }

    /// Checks this database's file (or in-memory store) as
    /// ``verify(configuration:)`` does, with this database's key and the
    /// classes it sees. Uncommitted writes are not checked.
    ///
    /// - Throws: ``CofferError`` `.misuse` from another thread, `.io`.
    public func verify() throws -> [VerificationFinding] {
        try checkThread()
        var report: OpaquePointer?
        try CofferError.check(coffer_db_verify(handle, &report))
        return Self.findings(of: report)
    }

    private static func findings(of report: OpaquePointer?) -> [VerificationFinding] {
        defer { coffer_verify_report_free(report) }
        var out: [VerificationFinding] = []
        for i in 0..<coffer_verify_report_count(report) {
            let page = coffer_verify_report_page(report, i)
            let key = coffer_verify_report_object_key(report, i)
            let kind = VerificationFinding.Kind(rawValue: Int(coffer_verify_report_kind(report, i).rawValue)) ?? .tree
            out.append(VerificationFinding(
                kind: kind,
                page: page == UInt64.max ? nil : page,
                className: coffer_verify_report_class(report, i).map { String(cString: $0) },
                objectKey: key == 0 ? nil : key,
                message: coffer_verify_report_message(report, i).map { String(cString: $0) } ?? ""))
        }
        let omitted = coffer_verify_report_omitted(report)
        if omitted > 0 {
            out.append(VerificationFinding(kind: .tree, page: nil, className: nil, objectKey: nil,
                                           message: "\(omitted) more findings were left out of the report"))
        }
        return out
    }
}
