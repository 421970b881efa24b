// The `Coffer` namespace enum, so that `Coffer.Error` and friends read as
// Realm's names do.

#if compiler(>=6.3)
/// The module's names, so that `Coffer.Error` names ``CofferError`` as `Realm.Error`
/// names Realm's error.
///
/// ```swift
/// do {
///     try db.write { try db.tryAdd(dog) }
/// } catch let error as Coffer.Error where error.code == .primaryKeyExists {
///     print("already there")
/// }
/// ```
///
/// A top-level type named `Error` would do the same, but it would shadow
/// `Swift.Error` in every file that imports Coffer. This caseless enum adds the
/// name without taking `Error` away from importers: plain `Error` there is still
/// `Swift.Error`.
///
/// A type named like its module takes over module-qualified names: once `Coffer`
/// is a type, `Coffer.Database` looks for a member of the type, not of the
/// module. So every public type of the module has an alias here, and
/// `Coffer.Database`, `Coffer.Results<Dog>` or `Coffer.Object` keep working.
/// The aliases use module selectors (`Coffer::Database`), which need Swift 6.3;
/// with an older compiler the enum is left out and `Coffer.Error` is not
/// available (``CofferError`` and ``Database/Error`` are).
public enum Coffer {
    /// ``CofferError``: the status code of the C core and its message.
    public typealias Error = Coffer::CofferError

    public typealias AnyDatabaseCollection<Element> = Coffer::AnyDatabaseCollection<Element>
    public typealias AnyValue = Coffer::AnyValue
    public typealias App = Coffer::App
    public typealias AuthError = Coffer::AuthError
    public typealias CofferError = Coffer::CofferError
    public typealias CofferLibrary = Coffer::CofferLibrary
    public typealias Credentials = Coffer::Credentials
    public typealias Database = Coffer::Database
    public typealias DatabaseCollection = Coffer::DatabaseCollection
    public typealias DatabaseProperty<Value: Coffer::_Persistable> = Coffer::DatabaseProperty<Value>
    public typealias DatabaseCollectionValue = Coffer::DatabaseCollectionValue
    public typealias Decimal128 = Coffer::Decimal128
    public typealias ElementMapper<Element: Coffer::Object> = Coffer::ElementMapper<Element>
    public typealias EmailPasswordAuth = Coffer::EmailPasswordAuth
    public typealias EmbeddedObject = Coffer::EmbeddedObject
    public typealias LinkingObjects<Element: Coffer::Object> = Coffer::LinkingObjects<Element>
    public typealias List<Element: Coffer::_Persistable> = Coffer::List<Element>
    public typealias Map<Key: Coffer::_MapKey, Value: Coffer::_Persistable> = Coffer::Map<Key, Value>
    public typealias Migration = Coffer::Migration
    public typealias MigrationBlock = Coffer::MigrationBlock
    public typealias MigrationObject = Coffer::MigrationObject
    public typealias MutableSet<Element: Coffer::_Persistable> = Coffer::MutableSet<Element>
    public typealias Object = Coffer::Object
    public typealias ObjectId = Coffer::ObjectId
    public typealias ObjectSchema = Coffer::ObjectSchema
    public typealias PersistableEnum = Coffer::PersistableEnum
    public typealias Persisted<Value: Coffer::_Persistable> = Coffer::Persisted<Value>
    public typealias Property = Coffer::Property
    public typealias PropertyType = Coffer::PropertyType
    public typealias Projected<Root: Coffer::Object, Value> = Coffer::Projected<Root, Value>
    public typealias ProjectedCollection<Element> = Coffer::ProjectedCollection<Element>
    public typealias Projection<Root: Coffer::Object> = Coffer::Projection<Root>
    public typealias Query<T> = Coffer::Query<T>
    public typealias QueryValues<Element> = Coffer::QueryValues<Element>
    public typealias Results<Element: Coffer::_ResultsElement> = Coffer::Results<Element>
    public typealias Schema = Coffer::Schema
    public typealias SortDescriptor = Coffer::SortDescriptor
    public typealias StringOptions = Coffer::StringOptions
    public typealias SyncConfiguration = Coffer::SyncConfiguration
    public typealias SyncError = Coffer::SyncError
    public typealias SyncSession = Coffer::SyncSession
    public typealias User = Coffer::User

    public typealias _Indexable = Coffer::_Indexable
    public typealias _ManagedProperty = Coffer::_ManagedProperty
    public typealias _MapKey = Coffer::_MapKey
    public typealias _Persistable = Coffer::_Persistable
    public typealias _PersistableInsideOptional = Coffer::_PersistableInsideOptional
    public typealias _PersistableInteger = Coffer::_PersistableInteger
    public typealias _PrimaryKey = Coffer::_PrimaryKey
    public typealias _QueryCollection = Coffer::_QueryCollection
    public typealias _QueryComparable = Coffer::_QueryComparable
    public typealias _QueryEquatable = Coffer::_QueryEquatable
    public typealias _QueryMany = Coffer::_QueryMany
    public typealias _QueryMap = Coffer::_QueryMap
    public typealias _QueryMinMax = Coffer::_QueryMinMax
    public typealias _QueryNumeric = Coffer::_QueryNumeric
    public typealias _QueryOptional = Coffer::_QueryOptional
    public typealias _QueryString = Coffer::_QueryString
    public typealias _ResultsElement = Coffer::_ResultsElement
    public typealias _StoredValue = Coffer::_StoredValue
    public typealias _ValueKind = Coffer::_ValueKind
}
#endif
