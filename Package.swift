// swift-tools-version:6.2
import PackageDescription

// Every target: Swift 6 language mode (the tools version default), explicit import visibility,
// and `any` spelled out for existentials.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The Swift runtime linked into the executable (repairctl and the floor it is measured against, built the same way).
/// SwiftPM does not pass the libraries the modules name for autolinking when linking statically: name those that
/// FoundationEssentials needs (what `swiftc -static-stdlib` links for a program that imports it).
let staticSwift: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"]),
    .linkedLibrary("_FoundationCShims"), .linkedLibrary("_FoundationCollections"),
    .linkedLibrary("swiftSynchronization"), .linkedLibrary("swift_StringProcessing"),
    .linkedLibrary("swift_RegexParser"),
]

let package = Package(
    name: "repairsyncd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "repairsyncd", targets: ["repairsyncd"]),
        .executable(name: "repairctl", targets: ["repairctl"]),
        .executable(name: "repair-api-dev", targets: ["repair-api-dev"]),
        .executable(name: "repair-api-conformance", targets: ["repair-api-conformance"]),
        .library(name: "RepairSyncModels", targets: ["RepairSyncModels"]),
        .library(name: "RepairSyncStore", targets: ["RepairSyncStore"]),
        .library(name: "RepairSyncEngine", targets: ["RepairSyncEngine"]),
        .library(name: "RepairSyncProtocol", targets: ["RepairSyncProtocol"]),
        .library(name: "RepairSyncControlClient", targets: ["RepairSyncControlClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // NIOHTTPTypes (repair-api-dev's Date header) and NIOSOCKS (a socks5 api.proxy); already in the graph through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        // TLS settings (trust roots, minimum version) and reading a refused certificate's chain to say why.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // gzip for repair-api-dev's compressed answers (the daemon inflates with AsyncHTTPClient's own decompressor).
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // libsystemd (sd_notify, sd_listen_fds, sd_journal_sendv) as a Swift module.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // The rtnetlink headers (NETLINK_ROUTE, RTMGRP_*, sockaddr_nl) for the connectivity probe.
        .systemLibrary(name: "CNetlink"),
        // malloc_trim and madvise, for the memory the daemon hands back when it goes idle.
        .systemLibrary(name: "CMemory"),
        // Wire and domain types shared by the engine, the CLI and the development backend (Foundation only).
        .target(
            name: "RepairSyncModels",
            swiftSettings: swiftSettings
        ),
        // The local SQLite replica: schema, migrations, record mappings.
        .target(
            name: "RepairSyncStore",
            dependencies: [
                "RepairSyncModels",
                .product(name: "GRDB", package: "GRDB.swift"),
                // sqlite3_wal_hook: the WAL's checkpoints beside the writer, not inside its commits.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The sync engine: outbox, base copies, push, pull, conflict resolution, status.
        .target(
            name: "RepairSyncEngine",
            dependencies: [
                "RepairSyncModels",
                "RepairSyncStore",
                // For the project's one JSON string escaper (an outbox entry's fields are JSON text).
                "RepairSyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                // The decompressor's errors (a gzip bomb, a corrupt body), named for the admin.
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // The control protocol, shared by the daemon and every client: the JSON value, the bounded parser and
        // serializer, the JSON-RPC envelope and error codes, and one type per method (name, access, params, result).
        // FoundationEssentials at most: no NIO, no GRDB, so a client that links it starts in a few milliseconds.
        .target(
            name: "RepairSyncProtocol",
            dependencies: ["RepairSyncModels"],
            swiftSettings: swiftSettings
        ),
        // The blocking Unix-socket client of the control protocol (repairctl, tools, tests): the C library only.
        .target(
            name: "RepairSyncControlClient",
            dependencies: ["RepairSyncProtocol"],
            swiftSettings: swiftSettings
        ),
        // The control socket's server (NIO): framing, limits, connections, subscriptions, the JSON-RPC dispatcher.
        .target(
            name: "RepairSyncControlServer",
            dependencies: [
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The daemon as a library: configuration, logging, the control methods, the services. The executable is
        // a thin entry point, so tests can drive the same code.
        .target(
            name: "RepairSyncDaemon",
            dependencies: [
                "RepairSyncModels",
                "RepairSyncStore",
                "RepairSyncEngine",
                "RepairSyncProtocol",
                "RepairSyncControlServer",
                // `repairsyncd doctor` asks the socket whether a daemon answers.
                "RepairSyncControlClient",
                "CSystemd",
                "CNetlink",
                "CMemory",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // The metrics listener's connection cap (MaximumAvailableConnections).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // doctor's certificate line: the API's TLS handshake and the chain it presents; the change stream.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Tasks on the event loops (TaskPlacement); long blocking work on NIO's blocking pool.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "repairsyncd",
            dependencies: [
                "RepairSyncDaemon",
                "RepairSyncModels",
                "RepairSyncStore",
                "RepairSyncProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command-line client: the protocol, the socket client and ArgumentParser, nothing else (no SQLite, no
        // libsystemd, no NIO: a test reads the binary to hold it to that). The Swift runtime and FoundationEssentials
        // are linked in statically: a status bar starts it every few seconds, and resolving their symbols at every
        // start was most of what it cost (docs/performance.md).
        .executableTarget(
            name: "repairctl",
            dependencies: [
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: staticSwift
        ),
        // The development backend: a real HTTP server that implements docs/api.md, with its own storage, a seeder,
        // and an admin surface for tests (edits as another user, deletes, counters, fault injection).
        .target(
            name: "RepairAPIDev",
            dependencies: [
                "RepairSyncModels",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "repair-api-dev",
            dependencies: [
                "RepairAPIDev",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The contract conformance checks of docs/api.md ("Checking a server"), run against any server through the
        // daemon's own HTTP client and wire types; `repair-api-conformance` is its command line.
        .target(
            name: "RepairAPIConformance",
            dependencies: [
                "RepairSyncModels",
                "RepairSyncEngine",
                // The strict JSON parser that keeps number literals as written (money exactness, key presence).
                "RepairSyncProtocol",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "repair-api-conformance",
            dependencies: [
                "RepairAPIConformance",
                "RepairSyncModels",
                // --ca-file and --proxy: the daemon's TransportSettings.
                "RepairSyncEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // The performance scenarios of docs/performance.md, against the built binaries as processes (scripts/bench).
        // Built, never installed.
        .executableTarget(
            name: "repairsync-bench",
            dependencies: [
                "RepairSyncStore",
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                // The process helpers (spawn, sd_notify readiness, status subscriptions) the reliability suite uses.
                "RepairSyncReliability",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // The floor of the badge scenario of scripts/bench: connect, send `status`, print the pending count — the C
        // library only. Built the same way as repairctl, never installed.
        .executableTarget(
            name: "repairsync-badge-floor",
            swiftSettings: swiftSettings,
            linkerSettings: staticSwift
        ),
        // Runs one engine sync in a process that crash tests kill at precise points. Built, never installed.
        .executableTarget(
            name: "repairsync-test-helper",
            dependencies: [
                "RepairSyncEngine",
                "RepairSyncStore",
                "RepairSyncModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        // A test-only SQLite VFS that simulates power cuts (docs/reliability.md, "Power cuts"): it wraps the unix VFS,
        // becomes the process's default, and at a chosen write or sync drops, keeps in part or tears what was not
        // synced. C, like SQLite's own crash test VFS; linked only into `repairsync-power-cut`.
        .target(
            name: "SQLiteCrashVFS",
            path: "Tests/SQLiteCrashVFS",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        // The power-cut workload through the crash VFS, in a process of its own. Built, never installed.
        .executableTarget(
            name: "repairsync-power-cut",
            dependencies: [
                "SQLiteCrashVFS",
                "RepairSyncEngine",
                "RepairSyncStore",
                "RepairSyncModels",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Child processes started with posix_spawn and reaped on a thread of their own — not Foundation's `Process`,
        // whose `run()` on Linux (swift-corelibs-foundation before PR #5472) can read past a buffer while it lists
        // /proc/self/fd and crash the parent. Foundation only: the simulator and the reliability harness share it.
        .target(
            name: "RepairSyncProcesses",
            swiftSettings: swiftSettings
        ),
        // The reliability scenarios over the built binaries as real processes (crashes, a faulty server, a conflict
        // storm, hostile socket input, bad configuration, a full disk, clock jumps, load, fuzzing). The test layer
        // runs them small; `repairsync-soak` runs them long and prints the table.
        .target(
            name: "RepairSyncReliability",
            dependencies: [
                "RepairSyncProcesses",
                "RepairSyncModels",
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                // The fuzz scenario drives the server's dispatcher in process.
                "RepairSyncControlServer",
                // The configuration keys (every one is tried with a wrong value).
                "RepairSyncDaemon",
                // The power-cut scenario opens the cut store as the daemon does and syncs it, against a development
                // backend in the same process, started on a copy of one file per cut.
                "RepairSyncStore",
                "RepairSyncEngine",
                "RepairAPIDev",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // A throwaway CA (HTTPS tests and the bench) and a CONNECT proxy on loopback.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "repairsync-soak",
            dependencies: [
                "RepairSyncReliability",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // The deterministic simulator (docs/reliability.md, "The simulator"): the real engine on a real SQLite file
        // against a simulated server in the same process, one seeded generator and a virtual clock, invariants
        // checked at every quiescent point. `repairsync-simulate` runs seeds and replays one; the tests run 2,000.
        .target(
            name: "RepairSyncSimulation",
            dependencies: [
                // The child process some seeds SIGKILL.
                "RepairSyncProcesses",
                // The simulated server writes its JSON strings with the project's one escaper.
                "RepairSyncProtocol",
                "RepairSyncEngine",
                "RepairSyncStore",
                "RepairSyncModels",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                // The simulated server on loopback, for seeds whose crashes are a child process's SIGKILL.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "repairsync-simulate",
            dependencies: [
                "RepairSyncSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fixtures and helpers shared by the test targets.
        .target(
            name: "RepairSyncTestSupport",
            dependencies: ["RepairSyncModels"],
            path: "Tests/RepairSyncTestSupport",
            swiftSettings: swiftSettings
        ),
        // A development backend running in the test process, and an HTTP helper to talk to it.
        .target(
            name: "BackendTestSupport",
            dependencies: [
                "RepairAPIDev",
                // HTTPS backends: a throwaway CA, and a client that trusts it.
                "RepairSyncEngine",
                "RepairSyncReliability",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/BackendTestSupport",
            swiftSettings: swiftSettings
        ),
        // A server that differs from repair-api-dev only in ways the contract allows, for the conformance tests.
        .target(
            name: "ConformanceTestSupport",
            dependencies: [
                "RepairSyncModels",
                "RepairSyncProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ConformanceTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncModelsTests",
            dependencies: ["RepairSyncModels", "RepairSyncTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncStoreTests",
            dependencies: [
                "RepairSyncStore",
                "RepairSyncModels",
                "RepairSyncTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncEngineTests",
            dependencies: [
                "RepairSyncProcesses",
                "RepairSyncEngine",
                "RepairSyncStore",
                "RepairSyncModels",
                "RepairAPIDev",
                "RepairSyncTestSupport",
                "BackendTestSupport",
                // A throwaway CA and a CONNECT proxy for the HTTPS and proxy tests.
                "RepairSyncReliability",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // sqlite3_trace_v2 and sqlite3_auto_extension, for the query-plan test's statement trace.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncProtocolTests",
            dependencies: ["RepairSyncProtocol", "RepairSyncModels", "RepairSyncTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncControlTests",
            dependencies: [
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                "RepairSyncControlServer",
                "RepairSyncTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncDaemonTests",
            dependencies: [
                "RepairSyncProcesses",
                "RepairSyncDaemon",
                "RepairSyncStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                "RepairSyncEngine",
                "RepairSyncModels",
                "RepairSyncProtocol",
                "RepairSyncControlClient",
                "RepairSyncControlServer",
                "RepairSyncReliability",
                "RepairSyncTestSupport",
                "BackendTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // Expected outputs, read from the source tree by the golden tests.
            exclude: ["Golden"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncReliabilityTests",
            dependencies: ["RepairSyncReliability", "RepairSyncProtocol", "RepairSyncControlClient"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncProcessesTests",
            dependencies: ["RepairSyncProcesses"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairSyncSimulationTests",
            dependencies: ["RepairSyncSimulation", "RepairSyncProcesses"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairAPIDevTests",
            dependencies: [
                "RepairSyncProcesses",
                "RepairAPIDev",
                "RepairSyncModels",
                "RepairSyncTestSupport",
                "BackendTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // To inflate the compressed answers the tests read.
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RepairAPIConformanceTests",
            dependencies: [
                "RepairSyncProcesses",
                "RepairAPIConformance",
                "RepairAPIDev",
                "RepairSyncEngine",
                "RepairSyncModels",
                "RepairSyncProtocol",
                "BackendTestSupport",
                "ConformanceTestSupport",
                "RepairSyncTestSupport",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
