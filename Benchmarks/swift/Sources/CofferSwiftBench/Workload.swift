// The workload: the same objects and checks as the C harness, from the same
// generator.

import Foundation

/// One object of the workload, as the C harness defines it (Benchmarks/workload.h):
/// the same generator, so the same seed gives the same objects and the same checks.
struct Entity: Equatable {
    var id: Int64
    var flag: Bool
    var i32: Int32
    var i64: Int64
    var f: Float
    var d: Double
    var text: String      // 0...99 characters of textAlphabet
    var blob: Data        // 0...99 bytes
    var group: Int64      // indexed: about 10 objects share a value
    var name: String      // indexed: 6 lowercase letters
}

/// splitmix64, as bench_rng in Benchmarks/workload.c.
struct SplitMix {
    var state: UInt64

    static func mix(_ value: UInt64) -> UInt64 {
        var x = value &+ 0x9e37_79b9_7f4a_7c15
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        return x ^ (x >> 31)
    }

    init(seed: UInt64, stream: UInt64, index: UInt64) {
        state = SplitMix.mix(SplitMix.mix(seed ^ (stream << 56)) ^ index)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<bound (multiply-shift).
    mutating func below(_ bound: UInt64) -> UInt64 {
        next().multipliedFullWidth(by: bound).high
    }
}

/// The data set and the answers each operation must give, from (seed, n) alone.
struct Workload {
    static let textAlphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ".utf8)
    private enum Stream: UInt64 { case entity = 1, update, shuffle, groupQuery, scan, prefix }
    /// The length of the prefixes of prefix queries (BENCH_PREFIX_LEN).
    static let prefixLength = 2

    let seed: UInt64
    let n: Int
    let singleWrites: Int
    let queries: Int
    let scans: Int
    let prefixQueries: Int
    /// Objects 0..<n + 2 * singleWrites; objects n..<n + singleWrites are the
    /// single-write ones, the rest the async single-write ones.
    let entities: [Entity]
    /// The ids 1...n in the shuffled order reads and updates visit them.
    let order: [Int64]

    init(seed: UInt64, n: Int, singleWrites: Int, queries: Int, scans: Int, prefixQueries: Int) {
        self.seed = seed
        self.n = n
        self.singleWrites = singleWrites
        self.queries = queries
        self.scans = scans
        self.prefixQueries = prefixQueries
        let groups = Workload.groupCount(n: n)
        entities = (0..<(n + 2 * singleWrites)).map { Workload.makeEntity(seed: seed, index: UInt64($0), groups: groups) }
        var ids = (0..<n).map { Int64($0) + 1 }
        var rng = SplitMix(seed: seed, stream: Stream.shuffle.rawValue, index: 0)
        var i = n
        while i > 1 {
            ids.swapAt(i - 1, Int(rng.below(UInt64(i))))
            i -= 1
        }
        order = ids
    }

    private static func makeEntity(seed: UInt64, index: UInt64, groups: UInt64) -> Entity {
        var r = SplitMix(seed: seed, stream: Stream.entity.rawValue, index: index)
        let flag = r.next() & 1 == 1
        let i32 = Int32(truncatingIfNeeded: r.next())
        let i64 = Int64(bitPattern: r.next())
        // Exactly representable values, so every engine stores them unchanged.
        let f = Float(Int32(truncatingIfNeeded: r.next() >> 40)) / 1024
        let d = Double(Int64(bitPattern: r.next() >> 11)) / 4096
        let textCount = Int(r.below(100))
        let text = (0..<textCount).map { _ in textAlphabet[Int(r.below(UInt64(textAlphabet.count)))] }
        let blobCount = Int(r.below(100))
        let blob = (0..<blobCount).map { _ in UInt8(truncatingIfNeeded: r.next()) }
        let group = Int64(r.below(groups))
        let name = (0..<6).map { _ in UInt8(ascii: "a") + UInt8(r.below(26)) }
        return Entity(id: Int64(index) + 1, flag: flag, i32: i32, i64: i64, f: f, d: d,
                      text: String(decoding: text, as: UTF8.self), blob: Data(blob), group: group,
                      name: String(decoding: name, as: UTF8.self))
    }

    /// How many distinct groups the objects fall in (bench_group_count).
    var groupCount: UInt64 { Workload.groupCount(n: n) }
    static func groupCount(n: Int) -> UInt64 { UInt64(n >= 10 ? n / 10 : 1) }

    /// The group indexed equality query `q` looks for (bench_query_group).
    func queryGroup(_ q: Int) -> Int64 {
        var r = SplitMix(seed: seed, stream: Stream.groupQuery.rawValue, index: UInt64(q))
        return Int64(r.below(groupCount))
    }

    /// The threshold of filter scan `s` (bench_scan_threshold).
    func scanThreshold(_ s: Int) -> Int64 {
        var r = SplitMix(seed: seed, stream: Stream.scan.rawValue, index: UInt64(s))
        return Int64(bitPattern: r.next())
    }

    /// The prefix of prefix query `q`: two lowercase letters (bench_query_prefix).
    func queryPrefix(_ q: Int) -> String {
        var r = SplitMix(seed: seed, stream: Stream.prefix.rawValue, index: UInt64(q))
        let letters = (0..<Workload.prefixLength).map { _ in UInt8(ascii: "a") + UInt8(r.below(26)) }
        return String(decoding: letters, as: UTF8.self)
    }

    /// The values the update writes into object `id`: i64 and d.
    func updatedValues(id: Int64) -> (i64: Int64, d: Double) {
        var r = SplitMix(seed: seed, stream: Stream.update.rawValue, index: UInt64(bitPattern: id))
        let i64 = Int64(bitPattern: r.next())
        let d = Double(Int64(bitPattern: r.next() >> 11)) / 4096
        return (i64, d)
    }

    /// The check each operation must produce, computed from the generator alone.
    func expectedChecks() -> [Operation: UInt64] {
        var byKey: UInt64 = 0
        var inOrder: UInt64 = 0
        var groupSizes: [Int64: UInt64] = [:]
        var prefixSizes: [Substring: UInt64] = [:]
        var updatedI64: [Int64] = []
        updatedI64.reserveCapacity(n)
        for (position, original) in entities.prefix(n).enumerated() {
            byKey = Check.add(byKey, original)
            groupSizes[original.group, default: 0] += 1
            prefixSizes[original.name.prefix(Workload.prefixLength), default: 0] += 1
            var updated = original
            (updated.i64, updated.d) = updatedValues(id: updated.id)
            updatedI64.append(updated.i64)
            inOrder = Check.ordered(inOrder, position: UInt64(position), updated)
        }
        let equality = (0..<queries).reduce(UInt64(0)) { $0 + (groupSizes[queryGroup($1)] ?? 0) }
        let scanned = (0..<scans).reduce(UInt64(0)) { sum, s in
            let threshold = scanThreshold(s)
            return sum + UInt64(updatedI64.lazy.filter { $0 > threshold }.count)
        }
        let prefixed = (0..<prefixQueries).reduce(UInt64(0)) { $0 + (prefixSizes[Substring(queryPrefix($1))] ?? 0) }
        return [.insertBulk: UInt64(n), .readByPrimaryKey: byKey, .updateAll: UInt64(n),
                .readAllInOrder: inOrder, .indexedEquality: equality, .filterScan: scanned,
                .stringPrefix: prefixed, .deleteAll: 0, .singleWrites: UInt64(singleWrites),
                .asyncSingleWrites: UInt64(2 * singleWrites)]
    }
}

/// The read checks of Benchmarks/workload.c: a hash of every field, added up
/// (reads by key, any order) or weighted by position (reads in order).
enum Check {
    private static func step(_ h: UInt64, _ v: UInt64) -> UInt64 {
        (h ^ v) &* 0x100_0000_01b3 &+ 0x9e37_79b9_7f4a_7c15
    }

    private static func bytes<C: Collection>(_ h: UInt64, _ data: C) -> UInt64 where C.Element == UInt8 {
        var h = step(h, UInt64(data.count))
        var word: UInt64 = 0
        var filled: UInt64 = 0
        for byte in data {
            word |= UInt64(byte) << (8 * filled)
            filled += 1
            if filled == 8 {
                h = step(h, word)
                word = 0
                filled = 0
            }
        }
        return step(h, word)
    }

    static func hash(_ e: Entity) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        h = step(h, UInt64(bitPattern: e.id))
        h = step(h, e.flag ? 1 : 0)
        h = step(h, UInt64(bitPattern: Int64(e.i32)))
        h = step(h, UInt64(bitPattern: e.i64))
        h = step(h, UInt64(e.f.bitPattern))
        h = step(h, e.d.bitPattern)
        h = bytes(h, e.text.utf8)
        h = bytes(h, e.blob)
        h = step(h, UInt64(bitPattern: e.group))
        h = bytes(h, e.name.utf8)
        return SplitMix.mix(h)
    }

    static func add(_ check: UInt64, _ e: Entity) -> UInt64 {
        check &+ hash(e)
    }

    static func ordered(_ check: UInt64, position: UInt64, _ e: Entity) -> UInt64 {
        check &+ hash(e) &* (2 &* position &+ 1)
    }
}
