// ValueResults: a list of values seen sorted or distinct, as Realm's
// `Results` of `list.sorted(ascending:)` and `list.distinct()`, read live in
// the order the C core gives its observer's rows.

internal import CCoffer

/// The values of a ``List`` seen sorted or distinct, live, as Realm's
/// `Results<Int>` of `list.sorted(ascending:)` and `list.distinct()`:
///
/// ```swift
/// let ascending = holder.values.sorted()        // 1, 2, 3 for [3, 1, 2]
/// let once = holder.values.distinct()           // each value once, first first
/// let token = ascending.observe { change in ... }
/// ```
///
/// It reads its list whenever it is used. Equal values keep their list
/// order (the sort is stable); `distinct()` keeps the first of equal values.
/// The order is a query's `SORT` order (``AnyValue`` lists: by kind, then
/// value). Observing it (``observe(on:_:)``) reports, as Realm does, a value
/// that changes places as a deletion plus an insertion.
public struct ValueResults<Element: _Persistable>: RandomAccessCollection, CustomStringConvertible {
    let list: List<Element>
    /// A `coffer_sort_order`.
    let order: Int32
    let isDistinct: Bool
    /// The view's positions in the elements of an unmanaged list.
    let unmanagedPositions: ([Element]) -> [Int]

    /// Positions are 0 up to ``count``.
    public typealias Index = Int

    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as ``count``.
    public var endIndex: Int { count }

    /// The number of values seen.
    public var count: Int { positions().count }

    /// The value at `position`; out of range stops the program.
    public subscript(position: Int) -> Element {
        let positions = positions()
        checkIndex(position, positions.count, in: "the \(kindName) values")
        return list[positions[position]]
    }

    /// Iterates the values as they are when the loop begins, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        if let location = list.managedLocation, location.owner.isGone { return [].makeIterator() }
        let elements = list.elementSnapshot
        return positions(in: elements).map { elements[$0] }.makeIterator()
    }

    /// `ValueResults<Int>[1, 2, 3]`.
    public var description: String { "ValueResults<\(Element.self)>\(Array(self))" }

    /// The database of a managed list; nil for an unmanaged one.
    public var database: Database? { list._cofferDatabase }

    private var kindName: String { isDistinct ? "distinct" : "sorted" }

    /// The list's positions in the view's order.
    func positions() -> [Int] {
        guard let location = list.managedLocation else { return unmanagedPositions(list.elementSnapshot) }
        // The list of a deleted object is seen empty, as its observer's last call says.
        if location.owner.isGone { return [] }
        return list.core.withHandle(location, nil) { handle in
            var total: UInt64 = 0
            try CofferError.check(coffer_list_count(handle, &total))
            var positions = [UInt64](repeating: 0, count: Int(total))
            var count = 0
            try CofferError.check(coffer_list_values_view(handle, order, isDistinct ? 1 : 0,
                                                          &positions, positions.count, &count))
            return positions.prefix(count).map { Int($0) }
        }
    }

    /// The view's positions in `elements`, the list's contents read now.
    private func positions(in elements: [Element]) -> [Int] {
        list.managedLocation == nil ? unmanagedPositions(elements) : positions()
    }
}

extension List where Element: Comparable {
    /// The values sorted, smallest first (`ascending` false: largest first),
    /// as live ``ValueResults``; equal values keep their list order. Realm's
    /// `sorted(ascending:)` of a list of values.
    public func sorted(ascending: Bool = true) -> ValueResults<Element> {
        ValueResults(list: self, order: sortOrder(ascending), isDistinct: false) { elements in
            elements.indices.sorted { a, b in
                let (x, y) = (elements[a], elements[b])
                if x == y { return a < b }
                return ascending ? x < y : y < x
            }
        }
    }
}

extension List where Element: Hashable {
    /// Each value once, the first of equal values in list order, as live
    /// ``ValueResults``: Realm's `distinct()` of a list of values.
    public func distinct() -> ValueResults<Element> {
        ValueResults(list: self, order: Int32(COFFER_SORT_NONE.rawValue), isDistinct: true) { elements in
            var seen = Set<Element>()
            return elements.indices.filter { seen.insert(elements[$0]).inserted }
        }
    }
}

extension ValueResults where Element: Comparable {
    /// The distinct values sorted: `list.distinct().sorted(ascending:)`.
    public func sorted(ascending: Bool = true) -> ValueResults<Element> {
        let distinct = isDistinct
        let unmanaged = unmanagedPositions
        return ValueResults(list: list, order: sortOrder(ascending),
                            isDistinct: distinct) { elements in
            unmanaged(elements).sorted { a, b in
                let (x, y) = (elements[a], elements[b])
                if x == y { return a < b }
                return ascending ? x < y : y < x
            }
        }
    }
}

/// The `coffer_sort_order` of an ascending or descending sort.
private func sortOrder(_ ascending: Bool) -> Int32 {
    Int32((ascending ? COFFER_SORT_ASCENDING : COFFER_SORT_DESCENDING).rawValue)
}
