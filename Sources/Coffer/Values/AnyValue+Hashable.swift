// Hashing AnyValue as it compares: scalars by value, objects by identity,
// lists in order and dictionaries whatever the order of their keys.

import Foundation

extension AnyValue: Hashable {
    /// Hashes what ``==`` compares. A live nested collection hashes its current
    /// contents, so, as for any value whose contents change, keep it in a set or
    /// as a dictionary key only while it does not change.
    public func hash(into hasher: inout Hasher) {
        storedValue.hashContents(into: &hasher)
    }
}

extension StoredValue {
    /// Feeds `hasher` so that values that are ``isSame(as:)`` hash alike.
    func hashContents(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v): hasher.combine(v)
        case .int(let v): hasher.combine(v)
        case .float(let v): v.isNaN ? hasher.combine("nan") : hasher.combine(v)
        case .double(let v): v.isNaN ? hasher.combine("nan") : hasher.combine(v)
        case .string(let v): hasher.combine(v)
        case .data(let v): hasher.combine(v)
        case .date(let v): hasher.combine(v)
        case .objectId(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        case .decimal128: hasher.combine("decimal128")  // equal values may differ in encoding
        case .object(let v):
            if let state = v.managedState {
                hasher.combine(ObjectIdentifier(state.database))
                hasher.combine(ObjectIdentifier(state.binding))
                hasher.combine(state.key)
            } else {
                hasher.combine(ObjectIdentifier(v))
            }
        case .link(let classId, let key):
            hasher.combine(classId)
            hasher.combine(key)
        case .fields: hasher.combine("fields")
        case .list(let items), .set(let items):
            hasher.combine(items.count)
            for item in items { item.hashContents(into: &hasher) }
        case .map(let entries):
            hasher.combine(entries.count)
            for entry in entries.sorted(by: { $0.key < $1.key }) {
                hasher.combine(entry.key)
                entry.value.hashContents(into: &hasher)
            }
        }
    }
}
