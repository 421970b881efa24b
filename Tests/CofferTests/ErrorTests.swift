// Tests of CofferError: codes, messages and what the C core reports.

import CCoffer
import Coffer
import Foundation
import Testing

@Suite struct ErrorTests {
    @Test func everyErrorStatusOfTheCAPIHasACode() {
        let statuses: [(coffer_status, Coffer.Error.Code)] = [
            (COFFER_ERR_INVALID_ARGUMENT, .invalidArgument), (COFFER_ERR_NO_MEMORY, .noMemory),
            (COFFER_ERR_IO, .io), (COFFER_ERR_NOT_FOUND, .notFound), (COFFER_ERR_MISUSE, .misuse),
            (COFFER_ERR_NOT_IN_WRITE, .notInWriteTransaction), (COFFER_ERR_READ_ONLY, .readOnly),
            (COFFER_ERR_SCHEMA, .schema), (COFFER_ERR_MIGRATION_REQUIRED, .migrationRequired),
            (COFFER_ERR_SCHEMA_VERSION, .schemaVersion), (COFFER_ERR_TYPE, .type),
            (COFFER_ERR_PRIMARY_KEY_EXISTS, .primaryKeyExists), (COFFER_ERR_IMMUTABLE, .immutable),
            (COFFER_ERR_MAP_FULL, .mapFull), (COFFER_ERR_FILE_TOO_LARGE, .fileTooLarge),
            (COFFER_ERR_NOT_A_DATABASE, .notADatabase), (COFFER_ERR_FORMAT_VERSION, .formatVersion),
            (COFFER_ERR_CORRUPTED, .corrupted), (COFFER_ERR_INTEGRITY, .integrity),
            (COFFER_ERR_KEY_REQUIRED, .keyRequired), (COFFER_ERR_WRONG_KEY, .wrongKey),
            (COFFER_ERR_NOT_ENCRYPTED, .notEncrypted), (COFFER_ERR_LIMIT, .limit), (COFFER_ERR_BUSY, .busy),
            (COFFER_ERR_INTERNAL, .internal), (COFFER_ERR_QUERY, .query),
        ]
        #expect(statuses.count == Coffer.Error.Code.allCases.count)
        for (status, code) in statuses {
            #expect(code.rawValue == Int32(status.rawValue))
            #expect(Coffer.Error.Code(rawValue: Int32(status.rawValue)) == code)
            #expect(code.summary == String(cString: coffer_strerror(status)))
        }
    }

    @Test func descriptionCombinesSummaryAndMessage() {
        let error = Coffer.Error(.wrongKey, "the key does not open 'x.coffer'")
        #expect(error.status == 22)
        #expect(error.description == "\(Coffer.Error.Code.wrongKey.summary): the key does not open 'x.coffer'")
    }

    @Test func codesSelectCatchClauses() {
        func fail() throws { throw Database.Error(.primaryKeyExists, "duplicate") }
        var matched = false
        do {
            try fail()
        } catch let error as Coffer.Error where error.code == .notFound {
            Issue.record("matched the wrong code")
        } catch let error as Coffer.Error where error.code == .primaryKeyExists {
            matched = true
        } catch {
            Issue.record("did not match: \(error)")
        }
        #expect(matched)
    }

    @Test func coffersErrorIsCofferErrorAndDatabaseError() {
        #expect(Coffer.Error.self == CofferError.self)
        #expect(Database.Error.self == CofferError.self)
        let error: any Error = CofferError(.busy, "open")
        #expect((error as? Coffer.Error)?.code == .busy)
    }

    @Test func plainErrorInAnImporterIsStillSwiftError() throws {
        enum Refusal: Error, Equatable { case no }
        func refuse() throws(any Error) { throw Refusal.no }
        #expect(throws: Refusal.no) { try refuse() }
        let typed: Result<Int, Error> = .failure(Refusal.no)
        #expect(throws: Refusal.no) { try typed.get() }
        // A value of any Swift error type fits plain `Error`; only Coffer's fits Coffer.Error.
        let plain: any Error = Refusal.no
        #expect(!(plain is Coffer.Error))
    }

    @Test func moduleQualifiedNamesStillResolve() throws {
        #expect(Coffer.Database.self == Database.self)
        #expect(Coffer.Object.self == Object.self)
        #expect(Coffer.Results<Dog>.self == Results<Dog>.self)
        #expect(Coffer.List<Int>.self == List<Int>.self)
        #expect(Coffer.Map<String, Int>.self == Map<String, Int>.self)
        #expect(Coffer.Persisted<String>.self == Persisted<String>.self)
        #expect(Coffer.Database.Configuration.self == Database.Configuration.self)
        let id: Coffer.ObjectId = .generate()
        #expect(id == id)
    }

    @Test func catchingCoffersErrorFromARealFailure() throws {
        let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "coffer-error-\(UUID().uuidString)", objectTypes: [Dog.self]))
        var caught: Coffer.Error?
        do {
            try db.tryAdd(Dog())
        } catch let error as Coffer.Error {
            caught = error
        }
        #expect(caught?.code == .notInWriteTransaction)
        #expect(caught?.message.contains("outside a write transaction") == true)
    }
}
