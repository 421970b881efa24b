// Rebuilding objects from export lines in one write transaction. Objects
// are created first with the properties that cannot hold links, then the
// link-holding ones (links, mixed values, embedded objects that hold them)
// are set, so that links may point forward, backward or in cycles. Every
// error names its input line, and nothing is committed unless every line
// was written.

import CCoffer

/// One object line of an export.
struct ExportedObject {
    let line: Int
    let json: JSON
    let className: String
    let key: UInt64
}

/// The header's schema and the object lines of an export text.
struct ExportDocument {
    let schema: SchemaInfo
    let objects: [ExportedObject]

    /// Parses every line; errors name the line.
    init(text: String) throws {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else {
            throw CLIError("line 1: the input is empty; expected the header line that coffer export writes")
        }
        func parse(_ line: Substring, _ number: Int) throws -> JSON {
            do { return try JSON.parse(String(line)) } catch { throw CLIError("line \(number): \(error)") }
        }
        let header = try parse(first, 1)
        guard case .string(ExportFormat.marker)? = header["coffer"], let schemaJSON = header["schema"] else {
            throw CLIError("line 1: not the header line of coffer export (it has no \"coffer\": \"export\" and \"schema\")")
        }
        guard case .number(String(ExportFormat.version))? = header["format"] else {
            throw CLIError("line 1: unknown export format \(header["format"]?.text ?? "(none)"); this tool reads format \(ExportFormat.version)")
        }
        do { schema = try SchemaInfo(json: schemaJSON) } catch let e as CLIError { throw CLIError("line 1: \(e.message)") }
        var objects: [ExportedObject] = []
        for (i, line) in lines.enumerated().dropFirst() where !line.allSatisfy(\.isWhitespace) {
            let json = try parse(line, i + 1)
            guard case .string(let className)? = json[MixedTag.objectClass] else {
                throw CLIError("line \(i + 1): an object line needs \"\(MixedTag.objectClass)\"")
            }
            guard case .number(let k)? = json[MixedTag.objectKey], let key = UInt64(k) else {
                throw CLIError("line \(i + 1): an object line needs \"\(MixedTag.objectKey)\", a non-negative integer")
            }
            objects.append(ExportedObject(line: i + 1, json: json, className: className, key: key))
        }
        self.objects = objects
    }
}

final class Importer {
    private let db: Database
    private var schema: SchemaInfo { db.schema }
    /// Per class id: the exported key of each imported object → its new key.
    private var keys: [coffer_class_id: [UInt64: UInt64]] = [:]
    private var deferredCache: [String: Bool] = [:]

    init(db: Database) {
        self.db = db
    }

    /// Checks that every class of the export exists in the file with the
    /// same properties (an existing file keeps its schema).
    static func checkCompatible(_ exported: SchemaInfo, with file: SchemaInfo, path: String) throws {
        for cls in exported.classes {
            guard let own = file.named(cls.name) else {
                throw CLIError("line 1: class \(cls.name) of the export is not in \(path)")
            }
            for p in cls.properties {
                guard let i = own.property(named: p.name) else {
                    throw CLIError("line 1: property \(cls.name).\(p.name) of the export is not in \(path)")
                }
                let mine = own.properties[i]
                guard mine.displayType == p.displayType, mine.isPrimaryKey == p.isPrimaryKey else {
                    throw CLIError("line 1: property \(cls.name).\(p.name) is \(p.displayType) in the export but \(mine.displayType) in \(path)")
                }
            }
        }
    }

    /// Writes every object in one write transaction and returns how many.
    func run(_ objects: [ExportedObject]) throws -> Int {
        let progress = Progress("importing", total: UInt64(objects.count) * 2)
        defer { progress.finish() }
        try db.write { txn in
            var done: UInt64 = 0
            for object in objects {
                try atLine(object.line) { try create(object, in: txn) }
                done += 1
                progress.update(done)
            }
            for object in objects {
                try atLine(object.line) { try setDeferred(object, in: txn) }
                done += 1
                progress.update(done)
            }
        }
        return objects.count
    }

    private func atLine(_ line: Int, _ body: () throws -> Void) throws {
        do { try body() } catch let e as CLIError { throw CLIError("line \(line): \(e.message)") }
    }

    private func targetClass(_ object: ExportedObject) throws -> ClassInfo {
        let cls = try schema.require(object.className, in: db.path)
        if cls.isEmbedded { throw CLIError("class \(cls.name) is embedded; its objects belong inside their parents") }
        return cls
    }

    private func decoder(_ arena: CArena) -> ValueDecoder {
        ValueDecoder(schema: schema, arena: arena) { [unowned self] cls, key in
            guard let found = self.keys[cls.id]?[key] else {
                throw CLIError("a link to \(cls.name) with \(MixedTag.objectKey) \(key), which is not in the input")
            }
            return found
        }
    }

    private func create(_ object: ExportedObject, in txn: Transaction) throws {
        let cls = try targetClass(object)
        if keys[cls.id]?[object.key] != nil {
            throw CLIError("\(cls.name) with \(MixedTag.objectKey) \(object.key) appears twice")
        }
        let arena = CArena()
        let fields = try decoder(arena).fields(object.json, of: cls) { !self.holdsLinks($0) }
        var obj: OpaquePointer?
        try check(fields.withUnsafeBufferPointer {
            coffer_object_create(txn.handle, cls.id, $0.baseAddress, $0.count, Int32(COFFER_UPDATE_ERROR), &obj)
        })
        keys[cls.id, default: [:]][object.key] = coffer_object_key_of(obj)
        coffer_object_release(obj)
    }

    private func setDeferred(_ object: ExportedObject, in txn: Transaction) throws {
        let cls = try targetClass(object)
        let arena = CArena()
        let fields = try decoder(arena).fields(object.json, of: cls) { self.holdsLinks($0) }
        guard !fields.isEmpty, let key = keys[cls.id]?[object.key] else { return }
        var obj: OpaquePointer?
        try check(coffer_object_get(txn.handle, cls.id, key, &obj))
        defer { coffer_object_release(obj) }
        try check(fields.withUnsafeBufferPointer { coffer_object_set_fields(obj, $0.baseAddress, $0.count) })
    }

    /// Whether a property can hold a link to an object of the file: a link
    /// to a class that is not embedded, a mixed value, or an embedded object
    /// that holds such a property.
    private func holdsLinks(_ p: PropertyInfo) -> Bool {
        if p.type == COFFER_TYPE_MIXED { return true }
        guard p.type == COFFER_TYPE_LINK, let name = p.objectClass, let target = schema.named(name) else { return false }
        guard target.isEmbedded else { return true }
        if let known = deferredCache[name] { return known }
        deferredCache[name] = true  // an embedded cycle counts as holding links
        let result = target.properties.contains { holdsLinks($0) }
        deferredCache[name] = result
        return result
    }
}
