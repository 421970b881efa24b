// The benchmark's command line.

import Foundation

/// The command line.
struct Options {
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    var n = 100_000
    var singleWrites = 1_000
    /// As in the C harness: indexed equality queries, filter scans, prefix queries.
    var queries = 1_000
    var scans = 10
    var prefixQueries = 100
    var seed: UInt64 = 42
    var repeatCount = 3
    var engines: [String] = []
    var workdir = "."
    var json: String?
    var machine = ""
    /// Set in the process that runs one engine once.
    var child: String?

    static func parse(_ args: [String], engines known: [String]) throws -> Options {
        var o = Options()
        o.engines = known
        var i = 0
        func value() throws -> String {
            guard i + 1 < args.count else { throw Invalid(description: "\(args[i]) needs a value") }
            i += 1
            return args[i]
        }
        func positive(_ name: String, min: Int = 1) throws -> Int {
            let text = try value()
            guard let v = Int(text), v >= min else {
                throw Invalid(description: "\(name) must be an integer of at least \(min), not '\(text)'")
            }
            return v
        }
        while i < args.count {
            switch args[i] {
            case "--n": o.n = try positive("--n")
            case "--single-writes": o.singleWrites = try positive("--single-writes", min: 0)
            case "--queries": o.queries = try positive("--queries")
            case "--scans": o.scans = try positive("--scans")
            case "--prefix-queries": o.prefixQueries = try positive("--prefix-queries")
            case "--repeat": o.repeatCount = try positive("--repeat")
            case "--seed":
                let text = try value()
                guard let s = UInt64(text) else { throw Invalid(description: "--seed must be an unsigned integer, not '\(text)'") }
                o.seed = s
            case "--engines":
                let list = try value().split(separator: ",").map(String.init)
                if let unknown = list.first(where: { !known.contains($0) }) {
                    throw Invalid(description: "unknown engine '\(unknown)' (known: \(known.joined(separator: ", ")))")
                }
                guard !list.isEmpty else { throw Invalid(description: "--engines needs at least one engine") }
                o.engines = list
            case "--workdir": o.workdir = try value()
            case "--json": o.json = try value()
            case "--machine": o.machine = try value()
            case "--child":
                let engine = try value()
                guard known.contains(engine) else { throw Invalid(description: "unknown engine '\(engine)'") }
                o.child = engine
            default: throw Invalid(description: "unknown option '\(args[i])'")
            }
            i += 1
        }
        return o
    }

    /// The arguments a child process gets to run `engine` once in `directory`.
    func childArguments(engine: String, directory: String) -> [String] {
        ["--child", engine, "--workdir", directory, "--n", String(n), "--single-writes", String(singleWrites),
         "--queries", String(queries), "--scans", String(scans), "--prefix-queries", String(prefixQueries),
         "--seed", String(seed)]
    }
}
