// Sync progress and opening against a real `coffer-sync serve`: upload and
// download progress reach completion and only grow, the bytes a reader
// downloads are the bytes the writer uploaded, a notification for the
// outstanding work ends once it is done, downloadBeforeOpen .always, .once
// and .never, and AsyncOpen/AutoOpen with the service down.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

/// What progress blocks were told, in order.
private final class Reports: Sendable {
    private let box = LockedBox<[SyncSession.Progress]>([])
    func add(_ p: SyncSession.Progress) { box.withLock { $0.append(p) } }
    var all: [SyncSession.Progress] { box.withLock { $0 } }
}

private final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Notes of `count` texts of `size` characters each, ids prefixed.
private func batch(_ prefix: String, _ count: Int, size: Int = 200) -> [String: String] {
    Dictionary(uniqueKeysWithValues: (0..<count).map { ("\(prefix)\($0)", String(repeating: "x", count: size)) })
}

@Suite("Sync progress and opening")
struct SyncProgressTests {
    static func sync(_ service: ServiceProcess, _ partition: String) -> SyncConfiguration {
        SyncConfiguration(url: URL(string: service.url)!, partitionValue: partition)
    }

    @Test("upload and download progress grow to completion, and the reader downloads the bytes the writer uploaded")
    func progressCounts() async throws {
        let service = try await SyncClientTests.service()
        defer { service.stop() }
        let partition = freshPartition()
        let writer = try await Replica(sync: Self.sync(service, partition))
        let upload = try await syncSession(of: writer)
        let uploads = Reports()
        let token = upload.addProgressNotification(for: .upload, mode: .reportIndefinitely) { uploads.add($0) }
        for round in 0..<4 {
            try await writer.add(batch("n\(round)-", 50))
        }
        try await upload.wait(for: .upload, timeout: patience)
        try await eventually { upload.progress(for: .upload).isTransferComplete }
        let sent = upload.progress(for: .upload)
        #expect(sent.transferredBytes > 4 * 50 * 200, "\(sent)")
        #expect(sent.progressEstimate == 1)
        let told = uploads.all
        #expect(told.count >= 2, "\(told)")
        #expect(zip(told, told.dropFirst()).allSatisfy { $0.transferredBytes <= $1.transferredBytes }, "\(told)")
        #expect(told.contains { !$0.isTransferComplete && $0.transferrableBytes > 0 }, "\(told)")
        #expect(told.last == sent, "\(told)")
        token.invalidate()

        // A reader opened after the uploads downloads them all.
        let reader = try await Replica(sync: Self.sync(service, partition))
        let download = try await syncSession(of: reader)
        let downloads = Reports()
        let token2 = download.addProgressNotification(for: .download) { downloads.add($0) }
        #expect(try await notes(of: reader, once: try await writer.notes()).count == 200)
        try await eventually { download.progress(for: .download).isTransferComplete }
        let got = download.progress(for: .download)
        #expect(got.transferredBytes == sent.transferredBytes, "downloaded \(got), uploaded \(sent)")
        let seen = downloads.all
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.transferredBytes <= $1.transferredBytes }, "\(seen)")
        #expect(seen.last?.isTransferComplete == true, "\(seen)")
        token2.invalidate()
        // The reader wrote nothing of its own: nothing is left to upload.
        try await download.wait(for: .upload, timeout: patience)
        #expect(download.progress(for: .upload).isTransferComplete, "\(download.progress(for: .upload))")
    }

    @Test("forCurrentlyOutstandingWork reports the work outstanding when added, then stops")
    func outstandingWork() async throws {
        let service = try await SyncClientTests.service()
        defer { service.stop() }
        let writer = try await Replica(sync: Self.sync(service, freshPartition()))
        let session = try await syncSession(of: writer)
        try await session.wait(for: .download, timeout: patience)
        session.pause()
        try await eventually { session.state == .paused }
        try await writer.add(batch("p", 30))
        let reports = Reports()
        let token = session.addProgressNotification(for: .upload, mode: .forCurrentlyOutstandingWork) { reports.add($0) }
        let first = try #require(reports.all.first)
        #expect(first.transferredBytes == 0 && first.transferrableBytes > 30 * 200, "\(first)")
        session.resume()
        try await session.wait(for: .upload, timeout: patience)
        try await eventually { reports.all.last?.isTransferComplete == true }
        let count = reports.all.count
        #expect(reports.all.allSatisfy { $0.transferrableBytes == first.transferrableBytes }, "\(reports.all)")
        // More work after completion is not reported.
        try await writer.add(batch("q", 10))
        try await session.wait(for: .upload, timeout: patience)
        try await Task.sleep(for: .milliseconds(200))
        #expect(reports.all.count == count, "\(reports.all)")
        token.invalidate()
    }

    @Test("downloadBeforeOpen: .always and .once (new file) see a second client's writes at open, .never does not wait")
    func downloadBeforeOpen() async throws {
        let service = try await SyncClientTests.service()
        defer { service.stop() }
        let partition = freshPartition()
        let writer = try await Replica(sync: Self.sync(service, partition))
        try await writer.add(batch("w", 20))
        try await syncSession(of: writer).wait(for: .upload, timeout: patience)
        let expected = try await writer.notes()

        let config = { (url: URL) in
            Database.Configuration(fileURL: url, objectTypes: [SyncNote.self], sync: Self.sync(service, partition))
        }
        let always = try await Replica(configuration: config(Replica.newFileURL()), downloadBeforeOpen: .always)
        #expect(try await always.notes() == expected)

        let onceURL = Replica.newFileURL()
        do {
            let once = try await Replica(configuration: config(onceURL), downloadBeforeOpen: .once)
            #expect(try await once.notes() == expected)
        }
        let never = try await Replica(configuration: config(Replica.newFileURL()), downloadBeforeOpen: .never)
        #expect(try await never.notes().count < expected.count, "an open with .never waited for the download")

        // .once on a file that synced before opens at once; .always waits.
        try await writer.add("late", "after the first open")
        try await syncSession(of: writer).wait(for: .upload, timeout: patience)
        var later = expected
        later["late"] = "after the first open"
        do {
            let again = try await Replica(configuration: config(onceURL), downloadBeforeOpen: .always)
            #expect(try await again.notes() == later)
        }
    }

    @Test("with the service down: downloadBeforeOpen times out, AsyncOpen fails, AutoOpen opens the local file")
    func serviceDown() async throws {
        let sync = SyncConfiguration(url: URL(string: "ws://127.0.0.1:9/sync/v1")!, partitionValue: freshPartition())
        let config = Database.Configuration(fileURL: Replica.newFileURL(), objectTypes: [SyncNote.self], sync: sync)
        do {
            _ = try await Replica(configuration: config, downloadBeforeOpen: .always, timeout: .milliseconds(500))
            Issue.record("an open downloaded from a service that is not there")
        } catch let error as CofferError {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.message.contains("downloading before open"), "\(error)")
        }

        var asyncStates: [String] = []
        for await state in AsyncOpen(configuration: config, timeout: .milliseconds(500)) {
            switch state {
            case .connecting: asyncStates.append("connecting")
            case .progress: asyncStates.append("progress")
            case .open: asyncStates.append("open")
            case .waitingForUser: asyncStates.append("waitingForUser")
            case .error(let error):
                asyncStates.append("error")
                #expect((error as? CofferError)?.code == .timeout, "\(error)")
            }
        }
        #expect(asyncStates.first == "connecting" && asyncStates.last == "error", "\(asyncStates)")

        var autoStates: [String] = []
        for await state in AutoOpen(configuration: config, timeout: .milliseconds(500)) {
            switch state {
            case .connecting: autoStates.append("connecting")
            case .open(let db):
                autoStates.append("open")
                #expect(db.syncSession?.connectionState != .connected)
            case .error(let error): autoStates.append("error \(error)")
            default: autoStates.append("other")
            }
        }
        #expect(autoStates == ["connecting", "open"], "\(autoStates)")
    }
}
