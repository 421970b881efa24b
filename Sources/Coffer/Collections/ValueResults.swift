// Results of values: a list of values seen sorted or distinct, as Realm's
// `Results<Int>` of `list.sorted(ascending:)` and `list.distinct()`, read live
// in the order the C core gives its observer's rows.

import Foundation
internal import CCoffer

/// Coffer's earlier name for ``Results`` of values.
public typealias ValueResults<Element: _ResultsValue> = Results<Element>

/// The values of a list in the order of its sorted or distinct view.
struct ListValueView<Element: _ResultsValue> {
    let list: List<Element>
    /// A `coffer_sort_order`.
    let order: Int32
    let isDistinct: Bool
    /// The view's positions in the elements of an unmanaged list.
    let unmanagedPositions: ([Element]) -> [Int]

    var kindName: String { isDistinct ? "distinct" : "sorted" }

    /// The source a ``Results`` reads.
    var source: ResultsValueSource<Element> {
        let view = self
        return ResultsValueSource(database: list._cofferDatabase, view: self,
                                  count: { view.positions().count },
                                  element: { position in
                                      let positions = view.positions()
                                      checkIndex(position, positions.count, in: "the \(view.kindName) values")
                                      return view.list[positions[position]]
                                  },
                                  elements: { view.elements() })
    }

    /// The values in the view's order, read in one pass.
    func elements() -> [Element] {
        if let location = list.managedLocation, location.owner.isGone { return [] }
        let elements = list.elementSnapshot
        let positions = list.managedLocation == nil ? unmanagedPositions(elements) : positions()
        return positions.map { elements[$0] }
    }

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

    /// The same view of another instance of the list (frozen or thawed).
    func over(_ list: List<Element>) -> ListValueView {
        ListValueView(list: list, order: order, isDistinct: isDistinct, unmanagedPositions: unmanagedPositions)
    }
}

/// What ``Results`` of values read, with the element type erased from the
/// view's constraints.
final class ResultsValueSource<Element> {
    let database: Database?
    /// The ``ListValueView`` read.
    let view: Any
    let count: () -> Int
    let element: (Int) -> Element
    let elements: () -> [Element]

    init(database: Database?, view: Any, count: @escaping () -> Int, element: @escaping (Int) -> Element,
         elements: @escaping () -> [Element]) {
        self.database = database
        self.view = view
        self.count = count
        self.element = element
        self.elements = elements
    }
}

extension Results where Element: _ResultsValue {
    /// The view these results read.
    var valueView: ListValueView<Element> { valueSource!.view as! ListValueView<Element> }

    init(_ view: ListValueView<Element>) {
        self.init(values: view.source)
    }

    /// The database of the list whose values these are; nil for an unmanaged list.
    public var database: Database? { storedDatabase }

    /// True for the values of a frozen list: they never change and can be
    /// read from any thread or task.
    public var isFrozen: Bool { valueView.list.isFrozen }

    /// These values over the frozen list (see ``Database/freeze()``), as
    /// Realm's `freeze()`; frozen results return themselves. The values of
    /// an unmanaged list stop the program, as in Realm.
    public func freeze() -> Results {
        isFrozen ? self : Results(valueView.over(valueView.list.freeze()))
    }

    /// These values over the live list of this frozen one; nil if its object
    /// was deleted. Live results return themselves.
    public func thaw() -> Results? {
        guard isFrozen else { return self }
        return valueView.list.thaw().map { Results(valueView.over($0)) }
    }

    /// The position of the first value equal to `value`, or nil, as Realm's `index(of:)`.
    public func index(of value: Element) -> Int? where Element: Equatable {
        firstIndex(of: value)
    }
}

extension Results where Element: _ResultsValue & Comparable {
    /// The values sorted, smallest first (`ascending` false: largest first),
    /// as Realm's `sorted(ascending:)`; the distinct values stay distinct.
    public func sorted(ascending: Bool = true) -> Results<Element> {
        let view = valueView
        let unmanaged = view.unmanagedPositions
        return Results(ListValueView(list: view.list, order: sortOrder(ascending), isDistinct: view.isDistinct) { elements in
            unmanaged(elements).sorted { a, b in
                let (x, y) = (elements[a], elements[b])
                if x == y { return a < b }
                return ascending ? x < y : y < x
            }
        })
    }
}

extension Results where Element: _ResultsValue & AdditiveArithmetic {
    /// The sum of the values (0 when there are none), as Realm's `sum()`.
    public func sum() -> Element {
        reduce(.zero, +)
    }
}

extension Results where Element: _ResultsValue & BinaryInteger {
    /// The mean of the values, nil when there are none, as Realm's `average()`.
    public func average<T: BinaryFloatingPoint>() -> T? {
        let all = valueSource!.elements()
        guard !all.isEmpty else { return nil }
        return T(all.reduce(0.0) { $0 + Double($1) }) / T(all.count)
    }
}

extension Results where Element: _ResultsValue & BinaryFloatingPoint {
    /// The mean of the values, nil when there are none, as Realm's `average()`.
    public func average<T: BinaryFloatingPoint>() -> T? {
        let all = valueSource!.elements()
        guard !all.isEmpty else { return nil }
        return T(all.reduce(0.0) { $0 + Double($1) }) / T(all.count)
    }
}

extension List where Element: _ResultsValue & Comparable {
    /// The values sorted, smallest first (`ascending` false: largest first),
    /// as live ``Results``; equal values keep their list order. Realm's
    /// `sorted(ascending:)` of a list of values:
    /// `let ages: Results<Int> = dog.ages.sorted(ascending: true)`.
    public func sorted(ascending: Bool = true) -> Results<Element> {
        Results(ListValueView(list: self, order: sortOrder(ascending), isDistinct: false) { elements in
            elements.indices.sorted { a, b in
                let (x, y) = (elements[a], elements[b])
                if x == y { return a < b }
                return ascending ? x < y : y < x
            }
        })
    }
}

extension List where Element: _ResultsValue & Hashable {
    /// Each value once, the first of equal values in list order, as live
    /// ``Results``: Realm's `distinct()` of a list of values.
    public func distinct() -> Results<Element> {
        Results(ListValueView(list: self, order: Int32(COFFER_SORT_NONE.rawValue), isDistinct: true) { elements in
            var seen = Set<Element>()
            return elements.indices.filter { seen.insert(elements[$0]).inserted }
        })
    }
}

/// The `coffer_sort_order` of an ascending or descending sort.
private func sortOrder(_ ascending: Bool) -> Int32 {
    Int32((ascending ? COFFER_SORT_ASCENDING : COFFER_SORT_DESCENDING).rawValue)
}
