// The protocol codec: every frame and value round-trips, and truncated or
// hostile input is refused with an error naming what was wrong, never a trap
// or an allocation the input does not back.
import CofferSyncProtocol
import Testing

@Suite("sync protocol codec")
struct CodecTests {
    static let client = ClientID(bytes: Array(0..<16))

    static let values: [SyncValue] = [
        .null, .bool(true), .bool(false), .int(0), .int(-1), .int(.max), .int(.min),
        .of(Float(1.5)), .of(Float.nan), .of(-0.0 as Double), .of(Double.infinity),
        .string(""), .string("héllo ✓"), .binary([]), .binary([0, 255, 7]),
        .date(seconds: -5, nanoseconds: 999_999_999), .objectId(Array(repeating: 1, count: 12)),
        .uuid(Array(0..<16)), .decimal128(Array(repeating: 9, count: 16)),
        .link(targetClass: "Person", primaryKey: .string("ann")),
        .embedded(className: "Note", properties: [.init("text", .string("x")), .init("n", .int(3))]),
        .list([.int(1), .list([.string("nested")]), .null]),
        .map([(key: "a", value: .int(1)), (key: "b", value: .map([(key: "c", value: .bool(true))]))]),
    ]

    static let changeset = Changeset(clientVersion: 42, clock: 0x0123_4567_89ab_cdef, changes: [
        .create(class: "Task", pk: .int(1), properties: [.init("title", .string("a"))]),
        .update(class: "Task", pk: .int(1), properties: [.init("done", .bool(true))]),
        .delete(class: "Task", pk: .int(2)),
        .listInsert(class: "Task", pk: .int(1), property: "steps",
                    id: ElementID(clock: 5, client: client, seq: 0), after: nil, value: .string("s")),
        .listInsert(class: "Task", pk: .int(1), property: "steps",
                    id: ElementID(clock: 5, client: client, seq: 1),
                    after: ElementID(clock: 5, client: client, seq: 0), value: .string("t")),
        .listErase(class: "Task", pk: .int(1), property: "steps", id: ElementID(clock: 5, client: client, seq: 0)),
        .listSet(class: "Task", pk: .int(1), property: "steps", id: ElementID(clock: 5, client: client, seq: 1),
                 value: .string("u")),
        .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("x")),
        .setRemove(class: "Task", pk: .int(1), property: "tags", value: .string("y")),
        .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "k", value: .string("v")),
        .mapRemove(class: "Task", pk: .int(1), property: "attrs", key: "k"),
    ])

    static let frames: [Frame] = [
        .hello(protocolVersion: 1, client: client, partition: "team-1", token: "", lastServerVersion: 7,
               schema: SyncSchema(classes: [
                   SchemaClass(name: "Task", primaryKey: "id", properties: [
                       SchemaProperty(name: "id", type: 2, flags: SchemaProperty.indexed),
                       SchemaProperty(name: "owner", type: 11, flags: SchemaProperty.optional, target: "Person"),
                   ]),
                   SchemaClass(name: "Note", isEmbedded: true, primaryKey: "", properties: []),
               ])),
        .welcome(protocolVersion: 1, lastClientVersion: 3, latestServerVersion: 99),
        .upload([changeset, Changeset(clientVersion: 43, clock: 1, changes: [])]),
        .upload([]),
        .uploadAck(lastClientVersion: 43, serverVersion: 1 << 40),
        .download(latestServerVersion: 10, changesets: [ServerChangeset(serverVersion: 9, origin: client, changeset: changeset)]),
        .download(latestServerVersion: 10, changesets: []),
        .downloadAck(lastServerVersion: 9),
        .error(.badChangeset, "changeset 3: unknown class 'X'", fatal: true),
        .error(.overloaded, "", fatal: false),
        .compensatingWrite(message: "write to Task 7 refused", className: "Task", pk: .int(7)),
        .compensatingWrite(message: "", className: "Person", pk: .string("ada")),
        .subscribe(setVersion: 3, queries: [SubscriptionQuery(name: "older", className: "Task", query: "age > 2"),
                                            SubscriptionQuery(name: "", className: "Person", query: "TRUEPREDICATE")]),
        .subscribe(setVersion: 0, queries: []),
        .subscriptionComplete(setVersion: 3, serverVersion: 1 << 33),
        .subscriptionError(message: "subscription 'older' of Task: LIKE at offset 4", setVersion: 3),
        .download(latestServerVersion: 10, changesets: [ServerChangeset(serverVersion: 9, origin: client, changeset:
            Changeset(clientVersion: 1, clock: 2, changes: [.evict(class: "Task", pk: .int(5))]))]),
    ]

    @Test("a SUBSCRIPTION error is never fatal and names its set")
    func subscriptionErrorFrames() throws {
        #expect(throws: WireError.self) {
            try Frame(decoding: Frame.error(code: ErrorCode.subscription.rawValue, message: "x", fatal: true).encoded)
        }
        #expect(throws: WireError.self) {
            try Frame(decoding: Frame.error(code: ErrorCode.subscription.rawValue, message: "x", fatal: false).encoded)
        }
        #expect(ErrorCode.subscription.rawValue == 11 && ErrorCode.subscription.name == "SUBSCRIPTION")
        #expect(Frame.subscribe(setVersion: 1, queries: []).name == "SUBSCRIBE")
        #expect(Frame.subscriptionComplete(setVersion: 1, serverVersion: 1).name == "SUBSCRIPTION_COMPLETE")
    }

    @Test("a COMPENSATING_WRITE is never fatal and always names its object")
    func compensatingWriteFrames() throws {
        #expect(throws: WireError.self) {
            try Frame(decoding: Frame.error(code: ErrorCode.compensatingWrite.rawValue, message: "x", fatal: true).encoded)
        }
        #expect(throws: WireError.self) {
            try Frame(decoding: Frame.error(code: ErrorCode.compensatingWrite.rawValue, message: "x", fatal: false).encoded)
        }
        #expect(ErrorCode.compensatingWrite.rawValue == 10)
        #expect(ErrorCode.compensatingWrite.name == "COMPENSATING_WRITE")
        #expect(Frame.compensatingWrite(message: "m", className: "Task", pk: .int(1)).name == "ERROR")
    }

    @Test("every value round-trips", arguments: values)
    func valueRoundTrip(_ value: SyncValue) throws {
        #expect(try SyncValue(encoded: value.encoded) == value)
    }

    @Test("every frame round-trips", arguments: frames)
    func frameRoundTrip(_ frame: Frame) throws {
        #expect(try Frame(decoding: frame.encoded) == frame)
    }

    @Test("every strict prefix of a frame is refused", arguments: frames)
    func truncatedFrames(_ frame: Frame) {
        let bytes = frame.encoded
        for length in 0..<bytes.count {
            #expect(throws: WireError.self, "prefix of \(length) of \(bytes.count) bytes") {
                try Frame(decoding: Array(bytes.prefix(length)))
            }
        }
    }

    @Test("trailing bytes after a frame are refused")
    func trailingBytes() {
        let error = #expect(throws: WireError.self) {
            try Frame(decoding: Frame.downloadAck(lastServerVersion: 1).encoded + [0])
        }
        #expect(error?.message.contains("unexpected bytes after DOWNLOAD_ACK") == true)
    }

    @Test("the download batch builder encodes what Frame encodes")
    func downloadBatch() throws {
        let stored = [StoredChangeset(serverVersion: 9, origin: Self.client, encoded: Self.changeset.encoded)]
        let bytes = DownloadBatch.frame(latestServerVersion: 10, changesets: stored)
        #expect(bytes == Frame.download(latestServerVersion: 10, changesets: [
            ServerChangeset(serverVersion: 9, origin: Self.client, changeset: Self.changeset)]).encoded)
    }

    @Test("hostile input is refused with a message naming the field")
    func hostile() {
        let cases: [([UInt8], String)] = [
            ([], "truncated frame type"),
            ([99], "unknown frame type 99"),
            // A count of 2^62 changesets in a 12-byte frame.
            ([3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40], "more than the 0 bytes left"),
            // A varint running past 64 bits.
            ([6] + [UInt8](repeating: 0xff, count: 10) + [1], "overflows 64 bits"),
            // An error message that is not UTF-8.
            ([7, 1, 2, 0xc3, 0x28, 1], "not valid UTF-8"),
            // A fatal flag of 2.
            ([7, 1, 0, 2], "fatal flag 2"),
        ]
        for (bytes, expected) in cases {
            let error = #expect(throws: WireError.self) { try Frame(decoding: bytes) }
            #expect(error?.message.contains(expected) == true, "\(bytes): \(error?.message ?? "")")
        }
    }

    @Test("values refuse unknown tags, bad payloads and nesting past the limit")
    func hostileValues() {
        let cases: [([UInt8], String)] = [
            ([15], "unknown value tag 15"),
            ([1, 2], "bool 2"),
            ([7, 0, 0x80, 0x94, 0xeb, 0xdc, 0x03], "nanoseconds"),
            ([8, 1, 2, 3], "truncated objectId"),
            ([13, 5, 0], "more than the 1 bytes left"),
            (Array(repeating: [UInt8]([13, 1]), count: 101).flatMap { $0 } + [UInt8(0)],
             "nested deeper than 100"),
        ]
        for (bytes, expected) in cases {
            let error = #expect(throws: WireError.self) { try SyncValue(encoded: bytes) }
            #expect(error?.message.contains(expected) == true, "\(bytes.prefix(8)): \(error?.message ?? "")")
        }
        // 100 levels are allowed.
        let deep: [UInt8] = Array(repeating: [UInt8]([13, 1]), count: 100).flatMap { $0 } + [0]
        #expect(throws: Never.self) { try SyncValue(encoded: deep) }
    }

    @Test("changesets refuse unknown ops and a bad anchor flag")
    func hostileChangesets() {
        var w = WireWriter()
        w.varint(UInt64(1))
        w.u64le(1)
        w.varint(UInt64(1))
        w.byte(12)
        w.string("Task")
        #expect(throws: WireError("unknown change op 12 at byte 10")) { try Changeset(encoded: w.bytes) }

        let insert = Changeset(clientVersion: 1, clock: 1, changes: [
            .listInsert(class: "T", pk: .int(1), property: "l", id: ElementID(clock: 1, client: Self.client, seq: 0),
                        after: nil, value: .null)]).encoded
        var bad = insert
        // The anchor flag sits before the final null value's tag.
        bad[bad.count - 2] = 2
        let error = #expect(throws: WireError.self) { try Changeset(encoded: bad) }
        #expect(error?.message.contains("anchor flag 2") == true)
    }

    @Test("a frame above the 64 MiB limit is refused before decoding")
    func oversizedFrame() {
        let bytes = [UInt8](repeating: 0, count: WireLimits.maxFrameBytes + 1)
        let error = #expect(throws: WireError.self) { try Frame(decoding: bytes) }
        #expect(error?.message.contains("larger than") == true)
    }

    @Test("stamps and element ids sort as their stored keys do")
    func sortKeys() throws {
        let a = Stamp(clock: 1 << 40, client: clientID(2))
        let b = Stamp(clock: 1 << 40, client: clientID(3))
        let c = Stamp(clock: (1 << 40) + 1, client: clientID(0))
        for (x, y) in [(a, b), (b, c), (a, c)] {
            #expect(x < y)
            #expect(x.sortKey.lexicographicallyPrecedes(y.sortKey))
        }
        #expect(try Stamp(sortKey: c.sortKey) == c)
        let e = ElementID(clock: 7, client: clientID(1), seq: 300)
        #expect(try ElementID(sortKey: e.sortKey) == e)
        #expect(ElementID(clock: 7, client: clientID(1), seq: 2).sortKey.lexicographicallyPrecedes(e.sortKey))
    }

    @Test("schemas merge additive changes and name breaking ones")
    func schemaMerge() throws {
        let base = TestSchema.schema
        var added = SyncSchema(classes: [
            SchemaClass(name: "Task", primaryKey: "id", properties: [SchemaProperty(name: "due", type: 7, flags: 1)]),
            SchemaClass(name: "Tag", primaryKey: "name", properties: [SchemaProperty(name: "name", type: 5)]),
        ])
        let merged = try base.merged(with: added)
        #expect(merged.class("Task")?.property("due") != nil)
        #expect(merged.class("Tag") != nil)
        #expect(try merged.merged(with: base) == merged)

        added = SyncSchema(classes: [
            SchemaClass(name: "Task", primaryKey: "id", properties: [SchemaProperty(name: "title", type: 2)])])
        #expect(throws: SchemaMismatch.self) { try base.merged(with: added) }
        do {
            _ = try base.merged(with: added)
        } catch {
            #expect("\(error)".hasPrefix("Task.title:"))
        }
        added = SyncSchema(classes: [SchemaClass(name: "Person", primaryKey: "age", properties: [])])
        #expect(throws: SchemaMismatch.self) { try base.merged(with: added) }
    }
}
