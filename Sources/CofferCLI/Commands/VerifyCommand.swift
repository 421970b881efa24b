// `coffer verify FILE`: the core's integrity check (coffer_verify), which
// walks every page with its own bounds-checked reader before the file is
// opened, then checks every object, index, link, backlink, counter and the
// change log. Sound: a summary, exit 0. Damaged: one line per finding on
// stdout (kind, page, class, object, what is wrong), a count on stderr,
// exit 1. A damaged file is never a crash.

import ArgumentParser
import CCoffer
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a file for damage: its pages, objects, indexes, links and change log.",
        discussion: """
            Prints "FILE: sound" and a summary when nothing is wrong (exit 0). Otherwise prints \
            one line per finding, "kind [page N] [class C] [object K]: what is wrong", and exits 1. \
            Verifying reads the whole file; the file may be open in other processes meanwhile.
            """)

    @OptionGroup var options: FileOptions

    func run() throws {
        guard FileManager.default.fileExists(atPath: options.file) else {
            throw CLIError("no such file: \(options.file)")
        }
        let key = try options.key()
        if Output.stderrIsTerminal { Output.error("verifying \(options.file)…") }
        let report = try VerificationReport(path: options.file, key: key)
        guard report.findings.isEmpty else {
            report.findings.forEach { Output.line($0) }
            let more = report.omitted > 0 ? " (and \(report.omitted) more not listed)" : ""
            throw CLIError("\(options.file) is damaged: \(report.findings.count) finding\(report.findings.count == 1 ? "" : "s")\(more)")
        }
        Output.line("\(options.file): sound\(try VerifyCommand.summary(path: options.file, key: key))")
    }

    /// ", N classes, M objects, B bytes" of a sound file.
    static func summary(path: String, key: EncryptionKey?) throws -> String {
        let db = try Database(path: path, key: key)
        let objects = try db.read { txn in try db.schema.classes.reduce(UInt64(0)) { $0 + (try txn.count($1)) } }
        let bytes = try CompactCommand.fileSize(path)
        return " (\(db.schema.classes.count) classes, \(objects) objects, \(bytes) bytes)"
    }
}

/// What coffer_verify() found in a file, as text lines.
struct VerificationReport {
    let findings: [String]
    let omitted: Int

    init(path: String, key: EncryptionKey?) throws {
        var config: OpaquePointer?
        try check(coffer_config_new(&config))
        defer { coffer_config_free(config) }
        try check(coffer_config_set_path(config, path))
        if let key {
            try check(key.bytes.withUnsafeBytes { coffer_config_set_encryption_key(config, $0.baseAddress, $0.count) })
        }
        var report: OpaquePointer?
        let status = coffer_verify(config, &report)
        guard status == COFFER_OK else { throw Database.openError(status, path: path, key: key) }
        self.init(report)
    }

    /// What coffer_db_verify() finds in the file of an open handle.
    init(_ db: Database) throws {
        var report: OpaquePointer?
        try check(coffer_db_verify(db.handle, &report), "verify")
        self.init(report)
    }

    /// Takes the findings of `report` and frees it.
    private init(_ report: OpaquePointer?) {
        defer { coffer_verify_report_free(report) }
        findings = (0..<coffer_verify_report_count(report)).map { VerificationReport.line(report, $0) }
        omitted = coffer_verify_report_omitted(report)
    }

    /// Throws, naming the first finding and how many there are, unless the
    /// file is sound; `what` says which file ("the file written").
    func requireSound(_ what: String) throws {
        guard let first = findings.first else { return }
        let count = findings.count + omitted
        throw CLIError("\(what) is damaged (\(count) finding\(count == 1 ? "" : "s"); first: \(first)); run `coffer verify` on it")
    }

    /// "record page 12 class Dog object 7: …", leaving out what does not apply.
    static func line(_ report: OpaquePointer?, _ index: Int) -> String {
        var text = String(cString: coffer_verify_kind_name(coffer_verify_report_kind(report, index)))
        let page = coffer_verify_report_page(report, index)
        if page != UInt64.max { text += " page \(page)" }
        if let cls = coffer_verify_report_class(report, index) { text += " class \(String(cString: cls))" }
        let object = coffer_verify_report_object_key(report, index)
        if object != 0 { text += " object \(object)" }
        let message = coffer_verify_report_message(report, index).map { String(cString: $0) } ?? ""
        return "\(text): \(message)"
    }
}
