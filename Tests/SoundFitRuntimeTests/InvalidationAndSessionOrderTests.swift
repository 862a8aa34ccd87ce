import SoundFitTestSupport
import Foundation
import SoundFitModel
import SoundFitEngine
import SoundFitHearing
import SoundFitProcessing
@testable import SoundFitRuntime
import Synchronization
import Testing

/// Invalidations published for the events that make values stale (gap 17), session
/// operations in request order (part of 10), the calibration as a runtime setting (gap 19).
@Suite(.timeLimit(.minutes(1))) struct InvalidationAndSessionOrderTests {
    private func makeRuntime() throws -> SoundFitRuntime {
        SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
    }

    /// Requests an activation and waits for its answer.
    private func activate(_ runtime: SoundFitRuntime, _ configuration: ProcessingConfiguration) async throws -> ProcessingSession {
        try await withCheckedThrowingContinuation { continuation in
            runtime.activateSession(configuration) { continuation.resume(with: $0) }
        }
    }

    /// Requests a deactivation and waits for its answer.
    private func deactivate(_ runtime: SoundFitRuntime) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            runtime.deactivateSession { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    private func profile(_ shift: Double = 0) throws -> HearingProfile {
        let levels: [(Double, Double)] = [(250, 35), (500, 35), (1000, 40), (1500, 45), (2000, 50), (3000, 55), (4000, 60), (6000, 65)]
        return try HearingProfile(left: try Audiogram(levels.map { ($0.0, $0.1 + shift) }), right: nil)
    }

    private func next(_ iterator: inout AsyncStream<ParameterInvalidation>.Iterator) async -> ParameterInvalidation? {
        await iterator.next()
    }

    @Test func staleValuesArePublishedWithTheirCause() async throws {
        let runtime = try makeRuntime()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        var invalidations = runtime.invalidationUpdates().makeAsyncIterator()
        try await runtime.audioSystemConnected(sampleRate: 48000)
        try await runtime.submitProfile(try profile())
        try await runtime.submitProfile(try profile(5))
        #expect(await next(&invalidations) == ParameterInvalidation(
            addresses: ["/processing/preset", "/processing/can_enable"], cause: .hearingProfileReplaced))

        try await deactivate(runtime)
        let session = try await activate(runtime, .fineTuning(techLevel: try TechLevel(4)))
        #expect(await next(&invalidations) == ParameterInvalidation(
            addresses: ["/processing/preset", "/processing/can_enable", "/processing/fitting"], cause: .techLevelChanged))
        #expect(session.preset.value?.techLevel.value == 4)

        try await runtime.setCalibration(105)
        #expect(await next(&invalidations) == ParameterInvalidation(addresses: ["/processing/preset"], cause: .calibrationChanged))
        #expect(runtime.calibration == 105)
        #expect(session.preset.value?.payload?.calibration == 105)

        await runtime.audioSystemDisconnected()
        try await runtime.audioSystemConnected(sampleRate: 48000)
        let everything = ParameterModel.all.map(\.address)
        #expect(await next(&invalidations) == ParameterInvalidation(addresses: everything, cause: .serverLostAndBack))
        await runtime.audioSystemDisconnected()
        try await runtime.audioSystemConnected(sampleRate: 44100)
        #expect(await next(&invalidations) == ParameterInvalidation(addresses: everything, cause: .sampleRateChanged))
    }

    @Test func sessionRequestsRunInTheOrderTheyWereMadeAndAnswerTheirOwnOutcome() async throws {
        let runtime = try makeRuntime()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        try await deactivate(runtime)
        let answers = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            runtime.activateSession(.singlePreset(techLevel: try! TechLevel(2))) { outcome in
                let session = try? outcome.get()
                answers.withLock { $0.append(session.map { "active \($0.techLevel.value) \($0.isActive)" } ?? "failed") }
            }
            runtime.deactivateSession { error in
                answers.withLock { $0.append(error == nil ? "inactive" : "failed") }
                done.resume()
            }
        }
        #expect(answers.withLock { $0 } == ["active 2 true", "inactive"])
        #expect(runtime.controller.session == nil)
    }

    /// Exactly `capacity` requested operations wait while one holds the queue; the rest are
    /// refused, and the audio system's own operations never are. (Through the runtime the
    /// queue drains while it fills, so only the queue itself shows the exact bound.)
    @Test func requestedSessionOperationsAreBounded() async throws {
        let operations = SessionOperations()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let holder = operations.enqueue(requested: false) { for await _ in gate { break } }
        var accepted: [Task<Void, Never>] = []
        var refused = 0
        for _ in 0..<40 {
            if let task = operations.enqueue({}) { accepted.append(task) } else { refused += 1 }
        }
        #expect(accepted.count == SessionOperations.capacity && refused == 40 - SessionOperations.capacity)
        #expect(operations.enqueue(requested: false) {} != nil, "the audio system's operation was refused")
        open.yield()
        await holder?.value
        for task in accepted { await task.value }
        #expect(operations.enqueue({}) != nil, "no room once the waiting operations were answered")
    }

    /// Through the runtime: every request is answered, a refused one with the busy error.
    @Test func requestedSessionOperationsAreAnsweredBusyWhenRefused() async throws {
        let runtime = try makeRuntime()
        let refused = Mutex(0)
        let answered = Mutex(0)
        for _ in 0..<40 {
            runtime.deactivateSession { error in
                if let error {
                    #expect("\(error)" == "\(SessionOperations.busy)")
                    refused.withLock { $0 += 1 }
                }
                answered.withLock { $0 += 1 }
            }
        }
        while answered.withLock({ $0 }) < 40 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(refused.withLock { $0 } <= 40 - SessionOperations.capacity)
    }
}
