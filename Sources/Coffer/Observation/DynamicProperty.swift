// Where SwiftUI exists, the observed wrappers are also DynamicProperty: a
// view holding one re-renders through Observation, and the wrappers with no
// configuration of their own take the environment's.

#if canImport(SwiftUI)
import SwiftUI

extension ObservedResults: DynamicProperty {
    /// Gives the store the environment's configuration before the view's body
    /// first reads the results.
    public mutating func update() {
        store.environmentConfiguration = environmentConfiguration
    }
}

extension ObservedSectionedResults: DynamicProperty {
    /// Gives the store the environment's configuration before the view's body
    /// first reads the sections.
    public mutating func update() {
        store.environmentConfiguration = environmentConfiguration
    }
}

extension ObservedDatabaseObject: DynamicProperty {}
#endif
