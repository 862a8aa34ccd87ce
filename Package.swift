// swift-tools-version:6.1
import PackageDescription

/// SoundFit: a JACK audio client that personalizes sound to a listener's hearing,
/// remote-controlled over OSC.
///
/// Products:
/// - `SoundFitDSP`: the DSP kernels, plain Swift (with `SoundFitModel`, the vocabulary they share).
/// - `SoundFitEngine`: the kernels plus the real-time renderer with its lock-free mailbox, for
///   any driver (JACK, or offline on arrays with `InMemoryDriver`). Links neither JACK nor liblo.
/// - `SoundFit`: the whole application as a library (JACK host, OSC surface, state), the module
///   `SoundFit` re-exports the others.
/// - `soundfit`: the command-line tool.
///
/// Layers (see docs/Architecture.md; `scripts/check-docs.py` checks this list against the targets):
/// - `CJack`, `CLiblo`, `CSndfile`: system-library shims for libjack, liblo and libsndfile.
/// - `CRealtimeSupport`: FTZ/DAZ, the thread CPU clock, real-time section markers, child spawn.
/// - `CSoundFitSIMD`: AVX2/FMA builds of the DSP loops, chosen at run time.
/// - `SoundFitModel`: the parameter model (one declarative entry per parameter) and the
///   vocabulary every layer above shares; pure Swift, no dependencies.
/// - `SoundFitDSP`: pure DSP kernels on the model's vocabulary (tech levels, preset payloads), no I/O.
/// - `SoundFitEngine`: the real-time renderer with its lock-free mailbox, one slot per engine
///   parameter; runs on any driver (JACK or the in-memory driver).
/// - `SoundFitProcessing`: the processing model (controller, session, parameters, applicators,
///   delivery, interruptions); no JACK or OSC.
/// - `SoundFitAudioFile`: audio files through libsndfile (`CSndfile`), for `soundfit render`;
///   in no library product, so the DSP and engine products never link libsndfile.
/// - `SoundFitJSON`: the one JSON stack of every file a user edits or exchanges: a strict parser
///   that knows where each value is, the writer, and the reader that names file, line, column
///   and field in every problem.
/// - `SoundFitHearing`: hearing profiles (audiograms) and personalization preset generation.
/// - `SoundFitState`: patches (factory and user), state documents, durable atomic storage.
/// - `SoundFitRuntime`: the control plane: the processing model wired to the audio engine, and
///   the address space surfaces use.
/// - `SoundFitJack`: the JACK host adapter (client, process callback, private server).
/// - `OSCCore`: OSC itself, imports nothing of SoundFit: messages, bundles, timetags, address
///   patterns, the codec (liblo, `CLiblo`), UDP and TCP transports and their framing, per-source
///   budgets, the allow list.
/// - `SoundFitOSC`: SoundFit's OSC surface on `OSCCore`: the command table, subscriptions, the
///   generated OSC documentation.
/// - `SoundFitWeb`: the HTTP and WebSocket port (SwiftNIO): OSCQuery, the page, OSC over WebSocket.
/// - `SoundFit`: the library everything above composes into.
/// - `SoundFitCLI`: the `soundfit` executable.
///
/// Platforms: Linux only (JACK and liblo through pkg-config, Glibc). No Apple platform is
/// declared because none is built or tested.
///
/// No library target carries unsafe flags (a package that does cannot be depended on by
/// version). The real-time code is tested optimized because `scripts/test.sh` builds the
/// tests in the release configuration; only the benchmark targets and test modules, which no
/// product contains, keep optimization flags of their own.

/// Test modules built unoptimized (`-Onone`) in the release build the test script makes: they
/// drive the code they test, which is in the optimized modules (SoundFit's, and the real-time
/// path the heap-call counts measure), and optimizing them cost about 25 s of a clean build on
/// this 2-core machine. The tests whose own code computes keep the optimizer: DSP, hearing,
/// engine (reference filters, simulated audiograms, renders) and OSC (its fuzzer mutates 10 000
/// packets, twice as slow unoptimized). A test target is in no product, so its unsafe flags never
/// reach a package that depends on SoundFit.
let unoptimizedTests: [SwiftSetting] = [.unsafeFlags(["-Onone"])]

let package = Package(
    name: "SoundFit",
    products: [
        .library(name: "SoundFitDSP", targets: ["SoundFitDSP"]),
        .library(name: "SoundFitEngine", targets: ["SoundFitModel", "SoundFitDSP", "SoundFitEngine"]),
        .library(name: "SoundFit", targets: ["SoundFit"]),
        .executable(name: "soundfit", targets: ["SoundFitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        // C libraries and shims.
        .systemLibrary(
            name: "CJack", path: "Sources/CJack", pkgConfig: "jack",
            providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(
            name: "CLiblo", path: "Sources/CLiblo", pkgConfig: "liblo",
            providers: [.apt(["liblo-dev"])]),
        .systemLibrary(
            name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),
        .target(name: "CRealtimeSupport", path: "Sources/CRealtimeSupport"),
        // AVX2/FMA builds of DSP loops, chosen at run time (per-function target attributes, no flags).
        .target(name: "CSoundFitSIMD", path: "Sources/CSoundFitSIMD"),

        // Swift modules.
        .target(name: "SoundFitModel"),
        .target(name: "SoundFitDSP", dependencies: ["SoundFitModel", "CSoundFitSIMD"]),
        .target(name: "SoundFitEngine", dependencies: ["SoundFitModel", "SoundFitDSP"]),
        .target(name: "SoundFitJSON"),
        .target(name: "SoundFitAudioFile", dependencies: ["CSndfile"]),
        .target(name: "SoundFitProcessing", dependencies: ["SoundFitModel"]),
        .target(name: "SoundFitHearing", dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitJSON"]),
        .target(name: "SoundFitState", dependencies: ["SoundFitModel", "SoundFitProcessing", "SoundFitHearing", "SoundFitJSON"]),
        .target(
            name: "SoundFitRuntime",
            dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitEngine", "SoundFitProcessing", "SoundFitHearing", "SoundFitState"]),
        .target(
            name: "SoundFitJack",
            dependencies: [
                "SoundFitDSP", "SoundFitEngine", "CJack", "CRealtimeSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(name: "OSCCore", dependencies: ["CLiblo", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "SoundFitOSC",
            dependencies: [
                "OSCCore", "SoundFitModel", "SoundFitDSP", "SoundFitEngine", "SoundFitRuntime", "SoundFitProcessing", "SoundFitHearing", "SoundFitState",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "SoundFitWeb",
            dependencies: [
                "OSCCore", "SoundFitModel", "SoundFitJSON", "SoundFitDSP", "SoundFitRuntime", "SoundFitOSC",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "SoundFit",
            dependencies: [
                "SoundFitModel", "SoundFitJSON", "SoundFitDSP", "SoundFitEngine", "SoundFitProcessing", "SoundFitHearing", "SoundFitState", "SoundFitRuntime",
                "SoundFitJack", "OSCCore", "SoundFitOSC", "SoundFitWeb", "CRealtimeSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .executableTarget(
            name: "SoundFitCLI",
            dependencies: [
                "SoundFit", "SoundFitModel", "SoundFitHearing", "SoundFitJSON", "SoundFitProcessing", "SoundFitState",
                "SoundFitRuntime", "SoundFitAudioFile",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // Benchmarks (run with `swift run -c release soundfit-bench`). In no product: the root
        // package gets the `soundfit-bench` executable from the target, and consumers never see
        // its flags.
        .target(name: "CReferenceBiquad", path: "Benchmarks/CReferenceBiquad",
                cSettings: [.unsafeFlags(["-O3"])]),
        .executableTarget(
            name: "soundfit-bench",
            dependencies: ["SoundFitDSP", "SoundFitEngine", "SoundFitModel", "SoundFitHearing", "SoundFitTestSupport",
                           "CReferenceBiquad", "CRealtimeSupport"],
            path: "Benchmarks/SoundFitBenchmarks",
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),

        // Tests.
        .target(name: "SoundFitTestSupport", dependencies: ["SoundFitHearing", "SoundFitEngine"], path: "Tests/SoundFitTestSupport"),
        .target(name: "OSCTestSupport", dependencies: ["OSCCore"], path: "Tests/OSCTestSupport"),
        .target(name: "CAllocationCounter", dependencies: ["CRealtimeSupport"], path: "Tests/CAllocationCounter"),
        .testTarget(name: "SoundFitTests", dependencies: ["SoundFit", "SoundFitJack", .product(name: "Logging", package: "swift-log")], swiftSettings: unoptimizedTests),
        .testTarget(name: "SoundFitDSPTests", dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitTestSupport"]),
        .testTarget(name: "SoundFitModelTests", dependencies: ["SoundFitModel"], swiftSettings: unoptimizedTests),
        .testTarget(name: "SoundFitEngineTests", dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitEngine", "SoundFitTestSupport"]),
        .testTarget(name: "SoundFitProcessingTests", dependencies: ["SoundFitModel", "SoundFitProcessing", "SoundFitTestSupport"], swiftSettings: unoptimizedTests),
        .testTarget(name: "SoundFitJSONTests", dependencies: ["SoundFitJSON"], swiftSettings: unoptimizedTests),
        .testTarget(
            name: "SoundFitHearingTests",
            dependencies: ["SoundFitModel", "SoundFitHearing", "SoundFitDSP", "SoundFitJSON", "SoundFitProcessing", "SoundFitTestSupport"]),
        .testTarget(name: "OSCCoreTests", dependencies: ["OSCCore", "OSCTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: unoptimizedTests),
        .testTarget(
            name: "SoundFitOSCTests",
            dependencies: [
                "OSCCore", "OSCTestSupport", "SoundFitModel", "SoundFitOSC", "SoundFitEngine", "SoundFitProcessing", "SoundFitRuntime", "SoundFitTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SoundFitStateTests",
            dependencies: ["SoundFitModel", "SoundFitState", "SoundFitHearing", "SoundFitJSON", "SoundFitProcessing", "SoundFitTestSupport"],
            exclude: ["Fixtures"], swiftSettings: unoptimizedTests),
        .testTarget(
            name: "SoundFitRuntimeTests",
            dependencies: [
                "SoundFitModel", "SoundFitRuntime", "SoundFitDSP", "SoundFitEngine", "SoundFitProcessing", "SoundFitHearing",
                "SoundFitState", "SoundFitTestSupport",
            ], swiftSettings: unoptimizedTests),
        .testTarget(
            name: "SoundFitIntegrationTests",
            dependencies: [
                "SoundFit", "SoundFitTestSupport", "SoundFitAudioFile", "CJack", "CAllocationCounter", "CRealtimeSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Built so the tests can run the real binary (next to the test bundle).
                "SoundFitCLI",
            ],
            // Unoptimized: optimizing their 15 000 lines was the longest step of a clean build
            // (about 150 s of 400 on this 2-core machine, against 50 s). Their own JACK clients
            // (player, recorder, listener) keep up unoptimized at the tests' periods.
            swiftSettings: unoptimizedTests),
    ]
)
