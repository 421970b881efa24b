import CCoffer
import Coffer
import Testing

@Suite struct ErrorTests {
    @Test func everyErrorStatusOfTheCAPIHasACode() {
        let statuses: [(coffer_status, CofferError.Code)] = [
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
        #expect(statuses.count == CofferError.Code.allCases.count)
        for (status, code) in statuses {
            #expect(code.rawValue == Int32(status.rawValue))
            #expect(CofferError.Code(rawValue: Int32(status.rawValue)) == code)
            #expect(code.summary == String(cString: coffer_strerror(status)))
        }
    }

    @Test func descriptionCombinesSummaryAndMessage() {
        let error = CofferError(.wrongKey, "the key does not open 'x.coffer'")
        #expect(error.status == 22)
        #expect(error.description == "\(CofferError.Code.wrongKey.summary): the key does not open 'x.coffer'")
    }

    @Test func codesSelectCatchClauses() {
        func fail() throws { throw Database.Error(.primaryKeyExists, "duplicate") }
        var matched = false
        do {
            try fail()
        } catch let error as CofferError where error.code == .notFound {
            Issue.record("matched the wrong code")
        } catch let error as CofferError where error.code == .primaryKeyExists {
            matched = true
        } catch {
            Issue.record("did not match: \(error)")
        }
        #expect(matched)
    }
}
