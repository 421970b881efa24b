// The benchmark operations and the Engine protocol every database under test
// implements.

import Foundation

/// The operations, in the order they run, keyed as in the C harness's results.
enum Operation: String, CaseIterable {
    case insertBulk = "insert_bulk"
    case readByPrimaryKey = "read_by_primary_key"
    case updateAll = "update_all"
    case readAllInOrder = "read_all_in_order"
    case indexedEquality = "indexed_equality_query"
    case filterScan = "unindexed_filter_scan"
    case stringPrefix = "string_prefix_query"
    case deleteAll = "delete_all"
    case singleWrites = "single_object_write_transactions"
    case asyncSingleWrites = "single_object_async_write_transactions"

    var title: String {
        switch self {
        case .insertBulk: "bulk insert, one transaction (objects/s)"
        case .readByPrimaryKey: "read by primary key, all fields (objects/s)"
        case .updateAll: "update every object, one transaction (objects/s)"
        case .readAllInOrder: "read all in order, all fields (objects/s)"
        case .indexedEquality: "indexed int equality query, count (queries/s)"
        case .filterScan: "unindexed filter i64 > x, count (scans/s)"
        case .stringPrefix: "indexed string prefix query, count (queries/s)"
        case .deleteAll: "delete all, one transaction (objects/s)"
        case .singleWrites: "single-object write transactions (commits/s)"
        case .asyncSingleWrites: "single-object async writes from a task (commits/s)"
        }
    }

    /// How many units one run of the operation does.
    func units(_ o: Options) -> Int {
        switch self {
        case .indexedEquality: o.queries
        case .filterScan: o.scans
        case .stringPrefix: o.prefixQueries
        case .singleWrites, .asyncSingleWrites: o.singleWrites
        default: o.n
        }
    }
}

/// One database under test. Each operation returns its check: a count or a
/// hash of what it read, compared with Workload.expectedChecks().
protocol Engine {
    /// Creates an empty database in `directory`.
    init(directory: URL) throws
    /// Inserts objects 0..<n in one write transaction; returns the count after.
    func insertBulk(_ w: Workload) throws -> UInt64
    /// Reads every object by id in w.order, all fields; returns Check.add of them.
    func readByPrimaryKey(_ w: Workload) throws -> UInt64
    /// Sets i64 and d of every object (Workload.updatedValues), by id in
    /// w.order, in one write transaction; returns how many it updated.
    func updateAll(_ w: Workload) throws -> UInt64
    /// Reads every object in id order; returns Check.ordered of them.
    func readAllInOrder(_ w: Workload) throws -> UInt64
    /// Counts the objects with group == w.queryGroup(q) for each query q;
    /// returns the sum of the counts.
    func indexedEquality(_ w: Workload) throws -> UInt64
    /// Counts the objects with i64 > w.scanThreshold(s) for each scan s (the
    /// values after the update); returns the sum of the counts.
    func filterScan(_ w: Workload) throws -> UInt64
    /// Counts the objects whose name starts with w.queryPrefix(q) for each
    /// query q; returns the sum of the counts.
    func stringPrefix(_ w: Workload) throws -> UInt64
    /// Deletes every object in one write transaction; returns the count after.
    func deleteAll(_ w: Workload) throws -> UInt64
    /// Inserts objects n..<n + singleWrites, one durable transaction each;
    /// returns the count after.
    func singleWrites(_ w: Workload) throws -> UInt64
    /// Inserts objects n + singleWrites..<n + 2 * singleWrites from a task,
    /// one durable transaction each through the engine's async write API
    /// (Coffer's asyncWrite on an actor, GRDB's DatabasePool.write), awaiting
    /// each before the next; returns the count after.
    func asyncSingleWrites(_ w: Workload) throws -> UInt64
}

extension Engine {
    func run(_ op: Operation, _ w: Workload) throws -> UInt64 {
        switch op {
        case .insertBulk: try insertBulk(w)
        case .readByPrimaryKey: try readByPrimaryKey(w)
        case .updateAll: try updateAll(w)
        case .readAllInOrder: try readAllInOrder(w)
        case .indexedEquality: try indexedEquality(w)
        case .filterScan: try filterScan(w)
        case .stringPrefix: try stringPrefix(w)
        case .deleteAll: try deleteAll(w)
        case .singleWrites: try singleWrites(w)
        case .asyncSingleWrites: try asyncSingleWrites(w)
        }
    }
}

/// Runs `body` in a task and blocks the calling thread until it ends, for the
/// async operations of the engines' synchronous interface (the benchmark's
/// main thread is not one of the tasks' threads).
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome<T>()
    Task {
        do {
            outcome.result = .success(try await body())
        } catch {
            outcome.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// The result of ``waitFor(_:)``'s task. `@unchecked Sendable` because it is
/// written once by the task before the semaphore is signalled and read after.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// A wrong answer or a failed step, named for the report.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The same fixed 64-byte key as the C harness: the benchmark measures the
/// cipher, not key management.
let benchmarkKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })
