// swift-tools-version: 6.0
// Coffer for Swift: the C core (CCoffer) built from the same sources as the
// CMake library, and the Swift overlay on top of it (`import Coffer`).
import PackageDescription

// Debian's libutf8proc.pc adds -DUTF8PROC_EXPORTS (which only matters on
// Windows), and SwiftPM warns that it drops it. On Linux the header and library
// are in the default paths, so pkg-config is not needed there.
#if os(Linux)
let utf8procPkgConfig: String? = nil
#else
let utf8procPkgConfig: String? = "libutf8proc"
#endif

let package = Package(
    name: "Coffer",
    products: [
        .library(name: "Coffer", targets: ["Coffer"]),
        // The command-line inspector: schema, queries, export/import, copies.
        .executable(name: "coffer", targets: ["CofferCLI"]),
        // Realm Swift's exact names over Coffer: Realm code compiles by changing
        // only `import RealmSwift` to `import CofferRealmCompat`.
        .library(name: "CofferRealmCompat", targets: ["CofferRealmCompat"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CUTF8Proc",
            path: "Sources/CUTF8Proc",
            pkgConfig: utf8procPkgConfig,
            providers: [.apt(["libutf8proc-dev"]), .brew(["utf8proc"])]
        ),
        // Rooted at the package so that include/coffer.h is the public header;
        // `sources` keeps SwiftPM from compiling anything but the core.
        .target(
            name: "CCoffer",
            dependencies: ["CLMDB", "CSodium", "CUTF8Proc"],
            path: ".",
            sources: ["Sources/CCoffer"],
            publicHeadersPath: "include",
            cSettings: [
                .define("COFFER_BUILDING"),
                // Empty, like the core's own `#define _GNU_SOURCE`, so
                // that it is not a redefinition.
                .define("_GNU_SOURCE", to: ""),
                // The one include root of the core, as in CMakeLists.txt:
                // includes name a header by its layer folder ("storage/txn.h").
                .headerSearchPath("Sources/CCoffer"),
            ],
            linkerSettings: [
                .linkedLibrary("lmdb"),
                .linkedLibrary("sodium"),
                .linkedLibrary("utf8proc"),
                .linkedLibrary("pthread", .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "Coffer",
            dependencies: ["CCoffer"],
            path: "Sources/Coffer"
        ),
        // `coffer`, over the C API directly: it reads any file's stored schema
        // and handles values by their stored types, with no model classes.
        .executableTarget(
            name: "CofferCLI",
            dependencies: [
                "CCoffer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/CofferCLI"
        ),
        .target(
            name: "CofferRealmCompat",
            dependencies: ["Coffer"],
            path: "Sources/CofferRealmCompat"
        ),
        .testTarget(
            name: "CofferTests",
            dependencies: ["Coffer", "CCoffer"],
            path: "Tests/CofferTests"
        ),
        // The coffer tool's commands on files the Swift overlay writes.
        .testTarget(
            name: "CofferCLITests",
            dependencies: ["CofferCLI", "Coffer"],
            path: "Tests/CofferCLITests"
        ),
        // A Realm Swift app, as Realm users write it, with only its import changed.
        .testTarget(
            name: "RealmCompatTests",
            dependencies: ["CofferRealmCompat"],
            path: "Tests/RealmCompatTests"
        ),
        // Realm code in the Swift 5 language mode, as most Realm code is
        // written: it compiles against the Swift 6 package without warnings.
        .testTarget(
            name: "RealmSwift5Tests",
            dependencies: ["CofferRealmCompat"],
            path: "Tests/RealmSwift5Tests",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The Swift examples of Realm's documentation pages on local databases
        // (configure and open, configuration properties, object models, a
        // bundled file, the SwiftUI open examples with Observation standing in),
        // with only the renames of Coffer's naming rule. Swift 5 mode, the
        // language mode the pages are written in.
        .testTarget(
            name: "RealmDocExamplesTests",
            dependencies: ["Coffer"],
            path: "Tests/RealmDocExamplesTests",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // A terminal to-do list that redraws itself from @ObservedResults when
        // another process changes its file (examples/swift-todo).
        .executableTarget(
            name: "swift-todo",
            dependencies: ["Coffer"],
            path: "examples/swift-todo"
        ),
        // swift-todo run as its users run it, across processes.
        .testTarget(
            name: "SwiftTodoTests",
            dependencies: ["swift-todo"],
            path: "Tests/SwiftTodoTests"
        ),
        // The README's Swift blocks, kept equal to the README by scripts/check-readme.
        .testTarget(
            name: "ReadmeTests",
            dependencies: ["Coffer"],
            path: "Tests/ReadmeTests"
        ),
    ],
    swiftLanguageModes: [.v6],
    cLanguageStandard: .c11
)

// The sync service and its tests are the only part of the package on SwiftNIO
// (Hummingbird, PostgresNIO): the Coffer library and the coffer tool never
// depend on them. A build that tests the core alone (the ThreadSanitizer step of
// scripts/test) sets COFFER_CORE_ONLY=1 and leaves them out.
if Context.environment["COFFER_CORE_ONLY"] == nil {
    package.products += [
        // The sync service (docs/SYNC.md): WebSocket in front, PostgreSQL behind.
        // Only this product and its tests depend on NIO; the library and the
        // coffer tool do not.
        .executable(name: "coffer-sync", targets: ["CofferSyncService"]),
        // A sync transport on SwiftNIO with TLS (wss://) for the Coffer library:
        // `import CofferSyncNIO`, `SyncConfiguration(..., transport: NIOWebSocketTransport())`.
        .library(name: "CofferSyncNIO", targets: ["CofferSyncNIO"]),
    ]
    package.dependencies += [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.0.0"),
    ]
    package.targets += [
        // The sync wire protocol's codec (frames, changesets, values, schemas):
        // pure Swift with bounds-checked decoding, no NIO, so a Swift client can
        // share it.
        .target(
            name: "CofferSyncProtocol",
            path: "Sources/CofferSyncProtocol"
        ),
        // `coffer-sync`: migrate, serve, dump.
        .executableTarget(
            name: "CofferSyncService",
            dependencies: [
                "CofferSyncProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CSodium",
            ],
            path: "Sources/CofferSyncService"
        ),
        // NIOWebSocketTransport: the Coffer library's SyncTransport on
        // hummingbird-websocket's client, TLS through swift-nio-ssl.
        .target(
            name: "CofferSyncNIO",
            dependencies: [
                "Coffer",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/CofferSyncNIO"
        ),
        // What the tests against a running coffer-sync share: a private
        // PostgreSQL cluster (scripts/postgres) and the service as a child process.
        .target(
            name: "CofferSyncTestSupport",
            path: "Tests/CofferSyncTestSupport"
        ),
        // The sync service against a private PostgreSQL cluster (scripts/postgres),
        // driven over real WebSocket connections.
        .testTarget(
            name: "CofferSyncServiceTests",
            dependencies: [
                "CofferSyncProtocol",
                "CofferSyncService",
                "CofferSyncTestSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CofferSyncServiceTests"
        ),
        // The Swift sync client (SyncConfiguration, SyncSession, App, User) of
        // the Coffer library against the real service and PostgreSQL.
        .testTarget(
            name: "CofferSyncClientTests",
            dependencies: ["Coffer", "CofferSyncNIO", "CofferSyncProtocol", "CofferSyncService", "CofferSyncTestSupport"],
            path: "Tests/CofferSyncClientTests"
        ),
    ]
    // The README's wss:// block (compiled only where CofferSyncNIO is built).
    package.targets.first { $0.name == "ReadmeTests" }?.dependencies.append("CofferSyncNIO")
}
