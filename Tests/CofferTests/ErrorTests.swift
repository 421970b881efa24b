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
            (COFFER_ERR_INTERRUPTED, .interrupted), (COFFER_ERR_TIMEOUT, .timeout),
            (COFFER_ERR_BUFFER_TOO_SMALL, .bufferTooSmall), (COFFER_ERR_CANCELLED, .cancelled),
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

    /// The C core starts some messages with the subject the summary names
    /// already; the description says it once.
    @Test func descriptionsSayTheirSubjectOnce() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        var query: Coffer.Error?
        do { _ = try db.objects(Dog.self).tryFilter("age > > 3") } catch let error as Coffer.Error { query = error }
        #expect(query?.message == "query: at offset 7: expected a value, an argument or a key path after '>', found '>'")
        #expect(query?.description == "invalid query: at offset 7: expected a value, an argument or a key path after '>', found '>'")

        var changed = test.configuration
        changed.objectTypes = [Changed.Dog.self]
        var migration: Coffer.Error?
        do { _ = try Database(configuration: changed) } catch let error as Coffer.Error { migration = error }
        let description = try #require(migration?.description)
        #expect(description.hasPrefix("migration required: the schema differs from the file's at schema version 0: "), "\(description)")
        #expect(description.components(separatedBy: "migration required").count == 2, "said once: \(description)")

        // A message whose first words are not the summary's is kept whole.
        #expect(Coffer.Error(.query, "queries: x").description == "invalid query: queries: x")
        #expect(Coffer.Error(.io, "cannot open 'a: b'").description == "I/O error: cannot open 'a: b'")
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
