// Write helpers on a binding to a list, as Realm's on `$object.items`:
// append, remove(atOffsets:), move(fromOffsets:toOffset:), each in a
// transaction when the list is managed.

import Foundation
#if canImport(SwiftUI)
import SwiftUI
#endif

extension Binding {
    /// Appends `element` to the list, in a transaction when it is managed.
    public func append<Element>(_ element: Element) where Value == List<Element> {
        let list = wrappedValue
        list.writeOrSet { list.append(element) }
    }

    /// Removes the elements at `offsets`, as SwiftUI's `onDelete` gives
    /// them, in one transaction when the list is managed.
    public func remove<Element>(atOffsets offsets: IndexSet) where Value == List<Element> {
        let list = wrappedValue
        list.writeOrSet {
            for index in offsets.reversed() { list.remove(at: index) }
        }
    }

    /// Moves the elements at `offsets` before the element at `destination`
    /// (the list's count for the end), as SwiftUI's `onMove` gives them,
    /// in one transaction when the list is managed.
    public func move<Element>(fromOffsets offsets: IndexSet, toOffset destination: Int) where Value == List<Element> {
        let list = wrappedValue
        let target = movedOrder(count: list.count, offsets, destination)
        list.writeOrSet {
            var current = Array(0..<list.count)
            for (position, wanted) in target.enumerated() {
                let from = current.firstIndex(of: wanted)!
                guard from != position else { continue }
                list.move(from: from, to: position)
                current.insert(current.remove(at: from), at: position)
            }
        }
    }
}

/// The old indices of `count` elements in their order after the ones at
/// `offsets` move before the one at `destination`, as SwiftUI's
/// `move(fromOffsets:toOffset:)`.
func movedOrder(count: Int, _ offsets: IndexSet, _ destination: Int) -> [Int] {
    let moving = offsets.filter { $0 < count }
    let staying = (0..<count).filter { !offsets.contains($0) }
    let insertAt = staying.filter { $0 < destination }.count
    return Array(staying[..<insertAt]) + moving + Array(staying[insertAt...])
}

extension List {
    /// Runs `change` in a write transaction of the list's database when it
    /// is managed (a failure stops the program), else directly.
    func writeOrSet(_ change: () -> Void) {
        if let database {
            database.writeOrFail { _ in change() }
        } else {
            change()
        }
    }
}
