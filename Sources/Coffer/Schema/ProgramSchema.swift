// ProgramSchema: which of the program's Object subclasses a database opened
// without objectTypes gets, and why a class was left out.

internal import CCoffer

/// The schemas of the program's ``Object`` subclasses (``ProgramClasses``) that
/// a database opened without ``Database/Configuration/objectTypes`` adds to its
/// file, as Realm uses every class of the program.
///
/// A class is left out when its name is shared by another class of the program
/// (the file could hold only one of them), when its model is invalid, or when
/// it links to a class that is neither in the file nor added. Classes the file
/// has already keep their stored shape: without `objectTypes` nothing is migrated.
enum ProgramSchema {
    /// The schemas of every valid program class, by class name, and the names
    /// several classes share.
    private static let discovered: (byName: [String: ModelSchema], ambiguous: Set<String>) = {
        var byName: [String: ModelSchema] = [:]
        var ambiguous = Set<String>()
        for type in ProgramClasses.all {
            guard let schema = try? ModelSchema.of(type) else { continue }
            if byName[schema.className] != nil {
                ambiguous.insert(schema.className)
            }
            byName[schema.className] = schema
        }
        for name in ambiguous {
            byName[name] = nil
        }
        return (byName, ambiguous)
    }()

    /// True if several classes of the program are named `className`.
    static func isAmbiguous(_ className: String) -> Bool {
        discovered.ambiguous.contains(className)
    }

    /// The program classes the file of `db` lacks, each with every class it
    /// links to in the file or in the result.
    static func classesToAdd(to db: OpaquePointer) -> [ModelSchema] {
        func inFile(_ name: String) -> Bool {
            var classId: coffer_class_id = 0
            return coffer_db_find_class(db, name, &classId) == COFFER_OK
        }
        var added = discovered.byName.values.filter { !inFile($0.className) }
        while true {
            let available = Set(added.map(\.className))
            let complete = added.filter { schema in
                schema.properties.allSatisfy { property in
                    guard let target = property.objectType?.className() else { return true }
                    return available.contains(target) || inFile(target)
                }
            }
            if complete.count == added.count { break }
            added = complete
        }
        return added.sorted { $0.className < $1.className }
    }
}
