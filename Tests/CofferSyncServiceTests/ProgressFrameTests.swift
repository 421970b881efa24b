// Protocol 4 against the real service: a PROGRESS frame before each DOWNLOAD
// says how many changeset bytes are left (the client's own left out), 0
// before the caught-up frame; version 2 clients get none.
import CofferSyncProtocol
import CofferSyncTestSupport
import Testing

@Suite("PROGRESS frames (protocol 4)")
struct ProgressFrameTests {
    @Test("a version 4 client is told the bytes left before each DOWNLOAD; a version 2 client is not")
    func progressBeforeDownload() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()
        let writer = TestClient(url: service.url)
        try await writer.hello(partition: partition)
        var uploaded: [Changeset] = []
        for version in 1...3 {
            let changeset = Changeset(clientVersion: UInt64(version), clock: UInt64(version) << 16,
                                      changes: [TestSchema.createTask(Int64(version), title: "task \(version)")])
            try await writer.upload([changeset])
            uploaded.append(changeset)
        }
        // A changeset's bytes: an UPLOAD of it less the type byte and the count.
        let bytes = uploaded.reduce(0) { $0 + UInt64(Frame.upload([$1]).encoded.count - 2) }

        let reader = TestClient(url: service.url)
        try await reader.hello(partition: partition, version: WireLimits.progressProtocolVersion)
        #expect(try await reader.receive() == .progress(downloadableBytes: bytes))
        guard case .download(_, let changesets) = try await reader.receive() else {
            Issue.record("no DOWNLOAD after PROGRESS")
            return
        }
        #expect(changesets.map(\.changeset) == uploaded)
        reader.send(.downloadAck(lastServerVersion: changesets.last!.serverVersion))
        #expect(try await reader.receive() == .progress(downloadableBytes: 0))
        #expect(try await reader.receive() == .download(latestServerVersion: 3, changesets: []))

        let old = TestClient(url: service.url)
        try await old.hello(partition: partition)
        guard case .download = try await old.receive() else {
            Issue.record("a version 2 client got something else than DOWNLOAD")
            return
        }
    }

    @Test("PROGRESS round-trips through the codec and a truncated one is refused")
    func codec() throws {
        let frame = Frame.progress(downloadableBytes: 1 << 40)
        #expect(try Frame(decoding: frame.encoded) == frame)
        #expect(frame.name == "PROGRESS")
        #expect(throws: WireError.self) { try Frame(decoding: [10]) }
    }
}
