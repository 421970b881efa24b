// What every test suite shares: the kinds of database, temporary directories,
// configurations, the TestDatabase fixture, threads and error expectations.

import Coffer
import Foundation
import Testing

/// The three kinds of database every behaviour is checked on.
enum Storage: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case plain, encrypted, inMemory
    var testDescription: String { rawValue }
}

/// A 64-byte key for encrypted test databases.
let testKey = Data((0..<64).map { UInt8($0 * 3 % 256) })

/// A fresh directory under the system's temporary directory, removed on deinit.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-swift-tests-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }
}

/// A configuration of `storage` kind for `types`, in `directory` (a unique
/// in-memory identifier for `.inMemory`).
func configuration(_ storage: Storage, _ types: [Object.Type], in directory: TemporaryDirectory,
                   name: String = "test.coffer") -> Database.Configuration {
    var config = Database.Configuration(objectTypes: types)
    switch storage {
    case .plain:
        config.fileURL = directory.file(name)
    case .encrypted:
        config.fileURL = directory.file(name)
        config.encryptionKey = testKey
    case .inMemory:
        config.inMemoryIdentifier = "\(directory.url.lastPathComponent)-\(name)"
    }
    return config
}

/// A database of one storage kind for some classes, opened in a fresh temporary
/// directory that lives as long as the fixture: the shared opening of tests,
/// `let test = try TestDatabase(storage, [Dog.self]), db = test.db`.
final class TestDatabase {
    let dir = TemporaryDirectory()
    let configuration: Database.Configuration
    let db: Database

    init(_ storage: Storage = .plain, _ types: [Object.Type]) throws {
        configuration = CofferTests.configuration(storage, types, in: dir)
        db = try Database(configuration: configuration)
    }
}

/// Moves a value that is not Sendable to another thread, to check what happens
/// when code gets around the compiler's checks.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs `body` on a new thread and waits for its result.
func onAnotherThread<Result>(_ body: @escaping @Sendable () -> Result) -> Result {
    let done = DispatchSemaphore(value: 0)
    let result = ResultSlot<Result>()
    let thread = Thread {
        result.value = body()
        done.signal()
    }
    thread.start()
    done.wait()
    return result.value!
}

final class ResultSlot<Value>: @unchecked Sendable {
    var value: Value?
}

/// Expects `body` to throw a ``Coffer.Error`` with `code` whose message contains
/// every one of `fragments`.
func expectCofferError(_ code: Coffer.Error.Code, containing fragments: String..., sourceLocation: SourceLocation = #_sourceLocation,
                       _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected Coffer.Error .\(code), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as Coffer.Error {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(error.message.contains(fragment), "message '\(error.message)' lacks '\(fragment)'", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected Coffer.Error .\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// What a process ended by an exit test wrote to standard error.
func errorOutput(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A thread that makes a value, then stays alive until ``finish()``, so that a
/// `Database` opened there has an owner thread unlike any other, also when
/// used from a task on the cooperative pool.
final class OwnerThread<Value>: @unchecked Sendable {
    private let made = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private var made_: Value?

    init(_ make: @escaping @Sendable () -> Value) {
        Thread { [self] in
            made_ = make()
            made.signal()
            finished.wait()
        }.start()
        made.wait()
    }

    var value: Value { made_! }

    func finish() {
        finished.signal()
    }
}
