// Unmanaged lists and maps written as literals, so that nested values of
// AnyValue read as they look: `.list([.int(1)])`, `.dictionary(["k": .none])`.

extension List: ExpressibleByArrayLiteral {
    /// An unmanaged list of `elements`.
    public convenience init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension Map: ExpressibleByDictionaryLiteral {
    /// An unmanaged map of `elements`; a repeated key keeps its last value.
    public convenience init(dictionaryLiteral elements: (Key, Value)...) {
        var values: [String: Value] = [:]
        for (key, value) in elements {
            values[key._cofferKey] = value
        }
        self.init(values)
    }
}
