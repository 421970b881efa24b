// The models of Realm's filter-data example: projects and tasks.

import Coffer
import Foundation

/// Realm's filter-data example: projects with tasks that have labels and ratings.
enum Todo {
    final class Task: Object {
        @Persisted var name = ""
        @Persisted var isComplete = false
        @Persisted var assignee: String?
        @Persisted var priority = 0
        @Persisted var progressMinutes = 0
        @Persisted var labels: MutableSet<String>
        @Persisted var ratings: MutableSet<Int>
        @Persisted var due: Date?
        @Persisted var estimate: Double?
        @Persisted var notes: Map<String, Int>
        @Persisted(originProperty: "tasks") var projects: LinkingObjects<Project>
        /// Not stored: no @Persisted.
        var scratch = ""
        /// Computed from two stored properties.
        var summary: String { "\(name) (\(priority))" }
    }

    final class Project: Object {
        @Persisted var name = ""
        @Persisted var tasks: List<Task>
        @Persisted var lead: Member?
        @Persisted var crew: List<Member>
        @Persisted var budget = Decimal128()
    }

    /// A project lead whose properties are stored under other names.
    final class Member: Object {
        @Persisted var fullName = ""
        @Persisted var level = 0

        override class func propertiesMapping() -> [String: String] {
            ["fullName": "full_name", "level": "lvl"]
        }
    }

    static let types: [Object.Type] = [Task.self, Project.self, Member.self]
}
