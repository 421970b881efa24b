// The order of a replicated list (docs/SYNC.md, "Why lists converge"): each
// element follows its anchor, and siblings with the same anchor are ordered
// by id, larger first. That is a pre-order walk of the anchor tree, done with
// an explicit stack because appends make chains as long as the list.
import CofferSyncProtocol

enum ListOrder {
    struct Element {
        var id: [UInt8]
        var anchor: [UInt8]?
    }

    /// The ids in list order (erased elements included; the caller hides them).
    static func order(_ elements: [Element]) -> [[UInt8]] {
        var children: [[UInt8]?: [[UInt8]]] = [:]
        for e in elements { children[e.anchor, default: []].append(e.id) }
        var result: [[UInt8]] = []
        result.reserveCapacity(elements.count)
        // Children pushed smallest first, so the largest id is visited first.
        var stack = (children[nil] ?? []).sorted { $0.lexicographicallyPrecedes($1) }
        while let id = stack.popLast() {
            result.append(id)
            if let next = children[id] {
                stack.append(contentsOf: next.sorted { $0.lexicographicallyPrecedes($1) })
            }
        }
        return result
    }
}
