// swift-tools-version:6.1
import PackageDescription

/// SoundFit: a JACK audio client that personalizes sound to a listener's hearing,
/// remote-controlled over OSC.
///
/// Layers (see README "Architecture"):
/// - `SoundFitModel`: the parameter model (one declarative entry per parameter) and the
///   vocabulary every layer above shares; pure Swift, no dependencies.
/// - `SoundFitDSP`: pure DSP kernels, no I/O.
/// - `SoundFitEngine`: the real-time renderer with its lock-free mailbox, one slot per engine
///   parameter; runs on any driver (JACK or the in-memory test driver).
/// - `SoundFitProcessing`: the processing model (controller, session, parameters, applicators,
///   delivery, interruptions); no JACK or OSC.
/// - `SoundFitJSON`: the one JSON stack of every file a user edits or exchanges: a strict parser
///   that knows where each value is, the writer, and the reader that names file, line, column
///   and field in every problem.
/// - `SoundFitHearing`: hearing profiles (audiograms) and personalization preset generation.
/// - `SoundFitState`: patches (factory and user), state documents, durable atomic storage.
/// - `SoundFitRuntime`: the control plane: the processing model wired to the audio engine, and
///   the address space surfaces use.
/// - `SoundFitJack`: the JACK host adapter (client, process callback, private server).
/// - `SoundFitOSC`: the liblo OSC surface.
/// - `SoundFitCLI`: the `soundfit` executable.
let package = Package(
    name: "SoundFit",
    platforms: [.macOS(.v15)],
    products: [
        .library(
            name: "SoundFit",
            targets: [
                "SoundFitModel", "SoundFitDSP", "SoundFitEngine", "SoundFitJSON", "SoundFitProcessing", "SoundFitHearing", "SoundFitState",
                "SoundFitRuntime", "SoundFitJack", "SoundFitOSC",
            ]),
        .executable(name: "soundfit", targets: ["SoundFitCLI"]),
        .executable(name: "soundfit-bench", targets: ["SoundFitBenchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries and shims.
        .systemLibrary(
            name: "CJack", path: "Sources/CJack", pkgConfig: "jack",
            providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(
            name: "CLiblo", path: "Sources/CLiblo", pkgConfig: "liblo",
            providers: [.apt(["liblo-dev"])]),
        .target(name: "CRealtimeSupport", path: "Sources/CRealtimeSupport"),

        // Swift modules.
        .target(name: "SoundFitModel"),
        .target(name: "SoundFitDSP", swiftSettings: optimizedSettings),
        .target(
            name: "SoundFitEngine",
            dependencies: ["SoundFitModel", "SoundFitDSP", "CRealtimeSupport"],
            swiftSettings: optimizedSettings),
        .target(name: "SoundFitJSON"),
        .target(name: "SoundFitProcessing", dependencies: ["SoundFitModel"]),
        .target(name: "SoundFitHearing", dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitJSON"]),
        .target(name: "SoundFitState", dependencies: ["SoundFitModel", "SoundFitProcessing", "SoundFitHearing", "SoundFitJSON"]),
        .target(
            name: "SoundFitRuntime",
            dependencies: ["SoundFitModel", "SoundFitDSP", "SoundFitEngine", "SoundFitProcessing", "SoundFitHearing", "SoundFitState"]),
        .target(
            name: "SoundFitJack",
            dependencies: [
                "SoundFitEngine", "CJack", "CRealtimeSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: optimizedSettings),
        .target(
            name: "SoundFitOSC",
            dependencies: [
                "SoundFitModel", "SoundFitEngine", "SoundFitRuntime", "SoundFitProcessing", "SoundFitHearing", "SoundFitState", "CLiblo",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "SoundFitCLI",
            dependencies: [
                "SoundFitModel", "SoundFitEngine", "SoundFitHearing", "SoundFitJSON", "SoundFitProcessing", "SoundFitState", "SoundFitRuntime",
                "SoundFitJack", "SoundFitOSC",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Benchmarks (run with `swift run -c release soundfit-bench`).
        .target(name: "CReferenceBiquad", path: "Benchmarks/CReferenceBiquad",
                cSettings: [.unsafeFlags(["-O3"])]),
        .executableTarget(
            name: "SoundFitBenchmarks",
            dependencies: ["SoundFitDSP", "SoundFitEngine", "SoundFitHearing", "SoundFitTestSupport", "CReferenceBiquad", "CRealtimeSupport"],
            path: "Benchmarks/SoundFitBenchmarks",
            swiftSettings: optimizedSettings),

        // Tests.
        .target(name: "SoundFitTestSupport", dependencies: ["SoundFitDSP", "SoundFitHearing"], path: "Tests/SoundFitTestSupport"),
        .target(name: "CAllocationCounter", dependencies: ["CRealtimeSupport"], path: "Tests/CAllocationCounter"),
        .testTarget(name: "SoundFitDSPTests", dependencies: ["SoundFitDSP", "SoundFitTestSupport"]),
        .testTarget(name: "SoundFitModelTests", dependencies: ["SoundFitModel"]),
        .testTarget(name: "SoundFitEngineTests", dependencies: ["SoundFitModel", "SoundFitEngine", "SoundFitTestSupport"]),
        .testTarget(name: "SoundFitProcessingTests", dependencies: ["SoundFitModel", "SoundFitProcessing", "SoundFitTestSupport"]),
        .testTarget(name: "SoundFitJSONTests", dependencies: ["SoundFitJSON"]),
        .testTarget(
            name: "SoundFitHearingTests",
            dependencies: ["SoundFitModel", "SoundFitHearing", "SoundFitDSP", "SoundFitJSON", "SoundFitProcessing", "SoundFitTestSupport"]),
        .testTarget(
            name: "SoundFitOSCTests",
            dependencies: [
                "SoundFitModel", "SoundFitOSC", "SoundFitEngine", "SoundFitProcessing", "SoundFitRuntime", "SoundFitTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SoundFitStateTests",
            dependencies: ["SoundFitModel", "SoundFitState", "SoundFitHearing", "SoundFitJSON", "SoundFitProcessing", "SoundFitTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "SoundFitRuntimeTests",
            dependencies: [
                "SoundFitModel", "SoundFitRuntime", "SoundFitDSP", "SoundFitEngine", "SoundFitProcessing", "SoundFitHearing",
                "SoundFitState", "SoundFitTestSupport",
            ]),
        .testTarget(
            name: "SoundFitIntegrationTests",
            dependencies: [
                "SoundFitModel", "SoundFitEngine", "SoundFitJack", "SoundFitOSC", "SoundFitRuntime", "SoundFitProcessing",
                "SoundFitTestSupport", "CJack", "CLiblo", "CAllocationCounter", "CRealtimeSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built so the tests can run the real binary (next to the test bundle).
                "SoundFitCLI",
            ]),
    ]
)

/// Real-time code is built optimized even in debug builds: the allocation test runs real
/// JACK cycles, and unspecialized generics in an unoptimized build would only test the
/// debug build (and measure nothing a user runs).
var optimizedSettings: [SwiftSetting] {
    [.unsafeFlags(["-O"], .when(configuration: .debug))]
}
