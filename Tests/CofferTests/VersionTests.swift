// Tests of the library version the overlay reports, and a direct open through
// the C API.

import CCoffer
import Coffer
import Testing

@Test func versionMatchesTheHeader() {
    #expect(CofferLibrary.version == "0.1.0")
    #expect(CofferLibrary.version == COFFER_VERSION_STRING)
}

@Test func opensAnInMemoryDatabaseThroughTheCAPI() throws {
    var config: OpaquePointer?
    #expect(coffer_config_new(&config) == COFFER_OK)
    let configuration = try #require(config)
    defer { coffer_config_free(configuration) }

    #expect(coffer_config_set_in_memory_identifier(configuration, "swift-smoke-test") == COFFER_OK)
    #expect(coffer_config_path(configuration) == nil)

    var db: OpaquePointer?
    let status = coffer_open(configuration, &db)
    #expect(status == COFFER_OK, "coffer_open: \(String(cString: coffer_last_error()))")
    let database = try #require(db)
    #expect(coffer_db_path(database) == nil)
    coffer_close(database)
}
