// EmbeddedObject: the base class of objects that live inside one parent object.

/// The base class of objects that live inside one parent object.
///
/// ```swift
/// final class Address: EmbeddedObject {
///     @Persisted var street = ""
///     @Persisted var city = ""
/// }
/// final class Person: Object {
///     @Persisted var address: Address?
///     @Persisted var previousAddresses: List<Address>
/// }
/// ```
///
/// An embedded object has no primary key and cannot be added on its own: it is
/// written with its parent, replaced or removed with the property or list
/// element that holds it, and deleted with the parent.
open class EmbeddedObject: Object {}
