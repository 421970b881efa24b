// Comparing two versions of a list or a map read whole: the change sets of a
// collection nested in a mixed value, whose observers learn of a change from
// its object and compare its contents before and after.

extension CollectionIndices {
    /// The change from `old` to `new`, their elements compared as
    /// ``StoredValue/isSame(as:)``: a list or map nested in an element is
    /// compared whole, so a change inside it modifies the element.
    ///
    /// The elements kept are a longest common subsequence of the two lists,
    /// searched after their common beginning and end are set aside. Between
    /// two kept elements, the old elements left and the new ones left are
    /// paired from the first on: each pair is a modification (at its old
    /// index in ``modifications``, as Realm reports them, and its new one in
    /// ``modificationsNew``), old elements beyond the pairs are deletions and
    /// new ones insertions. So replacing an element is a modification,
    /// inserting or removing one an insertion or a deletion, and a move a
    /// deletion plus an insertion. When what is left in the middle would take
    /// more than `limit` comparisons to search, it is paired from its first
    /// element on as one stretch, pairs of equal elements staying unchanged.
    init(from old: [StoredValue], to new: [StoredValue], limit: Int = 1 << 20) {
        self.init()
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix].isSame(as: new[prefix]) { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix].isSame(as: new[new.count - 1 - suffix]) { suffix += 1 }
        let oldMiddle = prefix..<(old.count - suffix), newMiddle = prefix..<(new.count - suffix)
        let kept = oldMiddle.count * newMiddle.count <= limit
            ? Self.commonSubsequence(old[oldMiddle], new[newMiddle]) : []
        var (oldNext, newNext) = (oldMiddle.lowerBound, newMiddle.lowerBound)
        for (oldKept, newKept) in kept + [(oldMiddle.upperBound, newMiddle.upperBound)] {
            let pairs = min(oldKept - oldNext, newKept - newNext)
            // Only a stretch not searched can pair equal elements: they stay.
            for pair in 0..<pairs where !old[oldNext + pair].isSame(as: new[newNext + pair]) {
                modifications.append(oldNext + pair)
                modificationsNew.append(newNext + pair)
            }
            deletions += (oldNext + pairs)..<oldKept
            insertions += (newNext + pairs)..<newKept
            (oldNext, newNext) = (oldKept + 1, newKept + 1)
        }
    }

    /// The positions (in the slices' own indices) of a longest common
    /// subsequence of `old` and `new`, in order.
    private static func commonSubsequence(_ old: ArraySlice<StoredValue>,
                                          _ new: ArraySlice<StoredValue>) -> [(Int, Int)] {
        let (rows, columns) = (old.count, new.count)
        guard rows > 0, columns > 0 else { return [] }
        // longest[i * (columns + 1) + j]: the longest common subsequence of
        // old's elements from i on and new's from j on.
        var longest = [Int32](repeating: 0, count: (rows + 1) * (columns + 1))
        let width = columns + 1
        for i in stride(from: rows - 1, through: 0, by: -1) {
            for j in stride(from: columns - 1, through: 0, by: -1) {
                longest[i * width + j] = old[old.startIndex + i].isSame(as: new[new.startIndex + j])
                    ? longest[(i + 1) * width + j + 1] + 1
                    : max(longest[(i + 1) * width + j], longest[i * width + j + 1])
            }
        }
        var kept: [(Int, Int)] = []
        var (i, j) = (0, 0)
        while i < rows, j < columns {
            if old[old.startIndex + i].isSame(as: new[new.startIndex + j]) {
                kept.append((old.startIndex + i, new.startIndex + j))
                (i, j) = (i + 1, j + 1)
            } else if longest[(i + 1) * width + j] >= longest[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return kept
    }

    /// True when nothing changed.
    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty
    }
}

extension MapChangeKeys {
    /// The change from `old` to `new`, by key: keys only in `old` are
    /// deletions, keys only in `new` insertions (both in their map's order),
    /// and keys in both whose values differ (``StoredValue/isSame(as:)``, a
    /// nested list or map compared whole) modifications.
    init(from old: [(key: String, value: StoredValue)], to new: [(key: String, value: StoredValue)]) {
        self.init()
        let newValues = Dictionary(new.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        for (key, value) in old {
            guard let now = newValues[key] else {
                deletions.append(key)
                continue
            }
            if !value.isSame(as: now) { modifications.append(key) }
        }
        let oldKeys = Set(old.map(\.key))
        insertions = new.map(\.key).filter { !oldKeys.contains($0) }
    }

    /// True when nothing changed.
    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty
    }
}
