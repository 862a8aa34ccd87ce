// swift-tools-version:6.1
import PackageDescription

/// A program that uses SoundFit's engine offline, without JACK or OSC: it depends on the
/// `SoundFitEngine` product only, so it links neither libjack nor liblo.
///
/// Here it depends on the checkout it lives in. The consumer test (`scripts/check-consumer.sh`)
/// copies it out and depends on a tagged clone instead, by URL and version, the way another
/// project would:
///
///     .package(url: "https://…/SoundFit.git", from: "0.1.0"),
let package = Package(
    name: "OfflineConsumer",
    dependencies: [
        .package(name: "SoundFit", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "OfflineRender",
            dependencies: [
                .product(name: "SoundFitEngine", package: "SoundFit"),
            ]),
    ]
)
