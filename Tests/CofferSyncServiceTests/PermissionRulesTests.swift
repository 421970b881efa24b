// The `rules` section's parsing: each form of rule, the predicate it becomes
// for a user, the deny default, and errors that name the class, the rule and
// the bad part.
@testable import CofferSyncService
import Foundation
import Testing

@Suite("permission rules")
struct PermissionRulesTests {
    static func parse(_ json: String) throws -> PermissionRules {
        try PermissionRules.parse(try JSONSerialization.jsonObject(with: Data(json.utf8)))
    }

    @Test("each form of rule becomes the predicate it means for a user")
    func forms() throws {
        let rules = try Self.parse("""
            {"classes": {
                "Task": {"read": "owner_id == %user.id OR shared == true", "write": "owner_id == %user.id"},
                "Note": {"read": true, "write": ["editor", "admin"]},
                "Log": {"read": ["auditor"], "write": false}},
             "roles": {"u1": ["editor"]},
             "rolesClaim": "roles"}
            """)
        let editor = QueryUser(id: "u1", roles: ["editor"]), stranger = QueryUser(id: "u2", roles: [])
        #expect(rules.rules(of: "Task").write.predicate(for: editor)
                == .compare(property: "owner_id", .equal, .userID))
        #expect(rules.rules(of: "Task").read.text == "owner_id == %user.id OR shared == true")
        #expect(rules.rules(of: "Note").read.predicate(for: stranger) == .constant(true))
        #expect(rules.rules(of: "Note").write.predicate(for: editor) == .constant(true))
        #expect(rules.rules(of: "Note").write.predicate(for: stranger) == .constant(false))
        #expect(rules.rules(of: "Log").read.predicate(for: QueryUser(id: "x", roles: ["auditor"])) == .constant(true))
        #expect(rules.rules(of: "Log").write.predicate(for: editor) == .constant(false))
        #expect(rules.userRoles == ["u1": ["editor"]])
        #expect(rules.rolesClaim == "roles")
    }

    @Test("a class without rules is denied both ways unless a default says otherwise")
    func defaults() throws {
        let denied = try Self.parse(#"{"classes": {}}"#).rules(of: "Other")
        #expect(denied == ClassRules(read: .always(false), write: .always(false)))
        let open = try Self.parse(#"{"default": {"read": true, "write": "owner_id == %user.id"}}"#).rules(of: "Other")
        #expect(open.read == .always(true))
        #expect(open.write.text == "owner_id == %user.id")
    }

    @Test("a bad rule is an error naming the class, the rule and the bad part")
    func errors() throws {
        let cases: [(String, String)] = [
            (#"{"classes": {"Task": {"read": true, "write": "owner_id LIKE 'a*'"}}}"#,
             "'rules.classes.Task.write': the rule \"owner_id LIKE 'a*'\" is not valid: 'LIKE' at offset 9 is not supported"),
            (#"{"classes": {"Task": {"read": "owner.name == %user.id", "write": true}}}"#,
             "'rules.classes.Task.read': the rule \"owner.name == %user.id\" is not valid: the key path 'owner.name'"),
            (#"{"classes": {"Task": {"read": true}}}"#, "'rules.classes.Task' needs both \"read\" and \"write\""),
            (#"{"classes": {"Task": {"read": true, "write": true, "delete": false}}}"#,
             "unknown setting 'rules.classes.Task.delete'"),
            (#"{"classes": {"Task": {"read": [], "write": true}}}"#,
             "'rules.classes.Task.read': a list of roles must hold one or more non-empty strings"),
            (#"{"classes": {"Task": {"read": 3, "write": true}}}"#, "'rules.classes.Task.read' must be true, false"),
            (#"{"default": {"read": "a ==", "write": true}}"#,
             "'rules.default.read': the rule \"a ==\" is not valid: the text ends at offset 4 where a property or a value was expected"),
            (#"{"roles": {"u1": "admin"}}"#, "'rules.roles.u1': a list of roles"),
            (#"{"rolesClaim": ""}"#, "'rules.rolesClaim' must be the name of a JWT claim"),
            (#"{"permissions": {}}"#, "unknown setting 'rules.permissions'"),
        ]
        for (json, message) in cases {
            let error = #expect(throws: ConfigurationError.self, "\(json)") { try Self.parse(json) }
            #expect(error?.description.contains(message) == true, "\(json): \(String(describing: error))")
        }
    }
}
