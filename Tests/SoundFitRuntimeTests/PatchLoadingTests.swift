import SoundFitTestSupport
import Foundation
import Synchronization
import SoundFitModel
import SoundFitEngine
import SoundFitHearing
import SoundFitProcessing
@testable import SoundFitRuntime
import SoundFitState
import Testing

/// A patch is applied whole or not at all, its preset before its enable.
@Suite struct PatchLoadingTests {
    private static let factoryPatches = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("patches", isDirectory: true)

    private struct LoadingError: Error, CustomStringConvertible {
        var description: String { "forced failure after a loading step" }
    }

    /// The values a load's first step left, seen by the hook.
    private final class HalfWay: Sendable {
        let values = Mutex<[String: ParameterValue]?>(nil)
    }

    /// A runtime with a session and rendering audio, and a keeper over the factory patches.
    private final class Rig: Sendable {
        let runtime: SoundFitRuntime
        let keeper: StateKeeper
        let loop: RenderLoop
        let directory: URL
        let following: Task<Void, Never>

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-loading-\(UUID().uuidString)")
            let session = ProcessingConfiguration.fineTuning(techLevel: try TechLevel(3))
            let descriptors = StateKeeper.writableDescriptors
            let document = StateDocument.defaults(descriptors: descriptors, session: session)
            runtime = SoundFitRuntime(engine: AudioEngine(settings: StateKeeper.chainSettings(document), techLevel: 3),
                                      sessionConfiguration: session)
            let library = PatchLibrary(factoryDirectory: PatchLoadingTests.factoryPatches,
                                       userStore: UserPatchStore(stateDirectory: directory), descriptors: descriptors)
            keeper = StateKeeper(runtime: runtime, library: library,
                                 store: DurableStateStore(directory: directory, descriptors: descriptors), restoring: document) { _ in }
            loop = RenderLoop(engine: runtime.engine)
            let keeper = keeper
            following = Task { await keeper.run() }
            try await runtime.audioSystemConnected()
        }

        func submitProfile() async throws {
            let levels: [(Double, Double)] = [(250, 35), (500, 35), (1000, 40), (1500, 45), (2000, 50), (3000, 55), (4000, 60), (6000, 65)]
            try await runtime.submitProfile(try HearingProfile(left: try Audiogram(levels), right: nil))
        }

        /// What every writable parameter holds now (queried from its control).
        func values() throws -> [String: ParameterValue] {
            var values: [String: ParameterValue] = [:]
            for descriptor in StateKeeper.writableDescriptors {
                values[descriptor.address] = try #require(runtime.parameter(at: descriptor.address)).currentValue()
            }
            return values
        }

        func patch(_ number: Int) throws -> Patch { try keeper.library.patch(.number(number)) }

        func stop() {
            following.cancel()
            loop.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Every parameter holds the patch's value, and the patch is current and unmodified.
    private func expectLoaded(_ patch: Patch, in rig: Rig, after previous: Int,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let values = try rig.values()
        for (address, value) in patch.parameters.sorted(by: { $0.key < $1.key }) {
            #expect(values[address] == value, "patch \(patch.number) after \(previous): \(address)", sourceLocation: sourceLocation)
        }
        #expect(rig.keeper.currentPatch == CurrentPatch(number: patch.number, name: patch.name),
                "patch \(patch.number) after \(previous)", sourceLocation: sourceLocation)
    }

    @Test func everyFactoryPatchLoadsWholeAfterEveryOther() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        try await rig.submitProfile()
        let numbers = rig.keeper.library.factoryPatches.map(\.number)
        #expect(numbers == [0, 1, 2, 3, 4])
        for previous in numbers {
            for next in numbers {
                let first = try await rig.keeper.loadPatch(.number(previous))
                try expectLoaded(first, in: rig, after: -1)
                let loaded = try await rig.keeper.loadPatch(.number(next))
                #expect(loaded.number == next)
                try expectLoaded(loaded, in: rig, after: previous)
                // Personalization really is on with the preset (or off) as the patch says.
                let session = try #require(rig.runtime.controller.session)
                #expect(session.isEnabled.value == (next == 1), "patch \(next) after \(previous)")
                #expect((session.preset.value?.variant == .default) == (next == 1), "patch \(next) after \(previous)")
            }
        }
    }

    @Test func withoutAHearingProfileSpeechClarityIsRefusedAndNothingChanges() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        _ = try await rig.keeper.loadPatch(.number(4))
        let before = try rig.values()
        await #expect(throws: ControlError.self) { try await rig.keeper.loadPatch(.number(1)) }
        #expect(try rig.values() == before)
        #expect(rig.keeper.currentPatch == CurrentPatch(number: 4, name: "Telephone band"))
    }

    /// A load that fails after some of its values were applied restores every value and keeps
    /// the current patch: an interruption that begins before Speech clarity's enable (a real
    /// refusal), and a forced failure after the first step of Telephone band loaded over Speech
    /// clarity (the restore needs two steps: the preset, then the enable).
    @Test(arguments: [(from: 4, to: 1, interrupt: true), (from: 1, to: 4, interrupt: false)])
    func aLoadThatFailsHalfWayChangesNothing(from: Int, to: Int, interrupt: Bool) async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        try await rig.submitProfile()
        let previous = try await rig.keeper.loadPatch(.number(from))
        let before = try rig.values()
        let session = try #require(rig.runtime.controller.session)
        let halfWay = HalfWay()
        rig.keeper.afterLoadStep.withLock { hook in
            hook = {
                halfWay.values.withLock { $0 = try? rig.values() }
                if interrupt { _ = try await session.interrupt(reason: "test") } else { throw LoadingError() }
            }
        }
        await #expect(throws: ControlError.self) { try await rig.keeper.loadPatch(.number(to)) }
        rig.keeper.afterLoadStep.withLock { $0 = nil }
        if interrupt { #expect(try await session.resolve(interruption: "test") == false) }
        #expect(try rig.values() == before)
        #expect(rig.keeper.currentPatch == CurrentPatch(number: previous.number, name: previous.name))
        // Values really had changed before the failure: the first step was applied.
        let target = try rig.patch(to)
        let seen = try #require(halfWay.values.withLock { $0 })
        for address in ["/filter/type", "/filter/cutoff", "/processing/preset", "/processing/intensity"] {
            #expect(seen[address] == target.parameters[address], "\(address) half-way")
            #expect(seen[address] != before[address], "\(address) half-way")
        }
        // And the patch loads once nothing gets in the way.
        let loaded = try await rig.keeper.loadPatch(.number(to))
        try expectLoaded(loaded, in: rig, after: from)
    }
}
