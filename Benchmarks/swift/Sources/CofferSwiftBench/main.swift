// The benchmark's entry point: a parent run or one child run.

import Foundation

// coffer-swift-bench: Coffer's Swift overlay (plain and encrypted) against
// GRDB on the CRUD workload of the C harness. Each engine runs in its own
// process, `--repeat` times in turn; the fastest run of each operation counts.

let engines: [(key: String, type: any Engine.Type)] = [
    ("coffer", CofferEngine.self), ("coffer_encrypted", EncryptedCofferEngine.self), ("grdb", GRDBEngine.self),
]

let usage = """
    usage: coffer-swift-bench [--n N] [--single-writes N] [--queries Q] [--scans S]
                              [--prefix-queries P] [--seed S] [--repeat R]
                              [--engines coffer,coffer_encrypted,grdb] [--workdir DIR]
                              [--json PATH] [--machine TEXT]
    """

// `coffer-swift-bench live ...`: the live data benchmark (LiveBench.swift).
if CommandLine.arguments.dropFirst().first == "live" {
    exit(runLive(Array(CommandLine.arguments.dropFirst(2))))
}

do {
    var options = try Options.parse(Array(CommandLine.arguments.dropFirst()), engines: engines.map(\.key))
    if let child = options.child {
        // One engine, one run: report on stdout for the parent.
        let type = engines.first { $0.key == child }!.type
        let w = Workload(seed: options.seed, n: options.n, singleWrites: options.singleWrites, queries: options.queries,
                         scans: options.scans, prefixQueries: options.prefixQueries)
        print(try runEngine(type, w, in: URL(fileURLWithPath: options.workdir)).json)
        exit(0)
    }
    if options.machine.isEmpty {
        options.machine = describeMachine()
    }
    let results = try runAll(options)
    print(results.table)
    if let path = options.json {
        try results.json.write(toFile: path, atomically: true, encoding: .utf8)
        print("wrote \(path)")
    }
} catch let error as Options.Invalid {
    FileHandle.standardError.write(Data("coffer-swift-bench: \(error.description)\n\(usage)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("coffer-swift-bench: \(error)\n".utf8))
    exit(1)
}
