// swift-tools-version: 6.0
// The Swift benchmark: Coffer's Swift overlay against GRDB on one CRUD
// workload. A package of its own so that the main package never fetches GRDB.
// Build and run it with scripts/bench (Release).
import PackageDescription

let package = Package(
    name: "CofferSwiftBench",
    dependencies: [
        .package(name: "Coffer", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "coffer-swift-bench",
            dependencies: [
                .product(name: "Coffer", package: "Coffer"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/CofferSwiftBench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
