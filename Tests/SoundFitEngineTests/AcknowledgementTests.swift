import Foundation
import SoundFitModel
import SoundFitDSP
@testable import SoundFitEngine
import Synchronization
import Testing

/// Exact acknowledgements: several values of one parameter in flight at once, each resolved to
/// the cycle that took it, or to superseded when the audio thread never rendered it.
@Suite struct AcknowledgementTests {
    private let gain = EngineSlot.outputGain

    private func submitGain(_ engine: AudioEngine, _ decibels: Float) throws -> EngineSubmission {
        try engine.submit([(gain, .float(decibels))])
    }

    private func acknowledgement(_ engine: AudioEngine, _ submission: EngineSubmission) -> SequenceAcknowledgement {
        engine.mailbox.acknowledgement(of: submission.sequences[0], index: gain.rawValue)
    }

    @Test func aValueOvertakenBeforeTheCycleIsSupersededAndTheNewerOneApplied() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        let older = try submitGain(engine, -6)
        let newer = try submitGain(engine, -12)
        #expect(acknowledgement(engine, older) == .waiting)

        let cycle = UInt32(driver.renderSilentCycle())

        #expect(acknowledgement(engine, older) == .superseded)
        #expect(acknowledgement(engine, newer) == .applied(cycle: cycle))
        await #expect(throws: EngineError.superseded) {
            try await engine.waitUntilApplied(older, timeout: .seconds(5))
        }
        #expect(try await engine.waitUntilApplied(newer, timeout: .seconds(5)) == cycle)
    }

    @Test func valuesTakenInSuccessiveCyclesAreEachAppliedInTheirOwnCycle() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        let first = try submitGain(engine, -6)
        let firstWait = Task { try await engine.waitUntilApplied(first, timeout: .seconds(5)) }
        let firstCycle = UInt32(driver.renderSilentCycle())
        let second = try submitGain(engine, -12)
        let secondWait = Task { try await engine.waitUntilApplied(second, timeout: .seconds(5)) }
        let secondCycle = UInt32(driver.renderSilentCycle())

        // Not "covered by the later acknowledgement": each names its own cycle.
        #expect(try await firstWait.value == firstCycle)
        #expect(try await secondWait.value == secondCycle)
        #expect(secondCycle == firstCycle + 1)
    }

    @Test func aWaitThatStartedBeforeItsValueWasOvertakenEndsSuperseded() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        let older = try submitGain(engine, -6)
        let olderWait = Task { try await engine.waitUntilApplied(older, timeout: .seconds(5)) }
        let newer = try submitGain(engine, -12)
        let cycle = UInt32(driver.renderSilentCycle())

        await #expect(throws: EngineError.superseded) { try await olderWait.value }
        #expect(try await engine.waitUntilApplied(newer, timeout: .seconds(5)) == cycle)
        #expect(engine.value(of: gain) == .float(-12))
    }

    @Test func aBatchWithAnOvertakenChangeIsSuperseded() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        let batch = try engine.submit([(.filterCutoff, .float(500)), (gain, .float(-6))])
        _ = try submitGain(engine, -12)
        driver.renderSilentCycle()

        await #expect(throws: EngineError.superseded) {
            try await engine.waitUntilApplied(batch, timeout: .seconds(5))
        }
    }

    @Test func theHistoryStillTellsSupersededWhenItHoldsAnOlderPickup() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()  // pickup 1: the initial values
        _ = try submitGain(engine, -1)
        driver.renderSilentCycle()  // pickup 2: older than the target
        let skipped = try submitGain(engine, -6)
        _ = try submitGain(engine, -7)
        driver.renderSilentCycle()  // pickup 3: newer
        for step in 0..<6 {  // pickups 4…9: the ring (8) wrapped, but still holds pickup 2
            _ = try submitGain(engine, Float(-10 - step))
            driver.renderSilentCycle()
        }
        #expect(acknowledgement(engine, skipped) == .superseded)
    }

    @Test func beyondTheHistoryAnOvertakenValueCountsAsAppliedByTheLaterOne() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        let skipped = try submitGain(engine, -6)
        _ = try submitGain(engine, -7)
        driver.renderSilentCycle()  // pickup 1: -7 (the first cycle takes every slot)
        var cycles: [UInt32] = []
        for step in 0..<RealtimeMailbox.historyDepth {  // 8 more: nothing older than -6 is left
            _ = try submitGain(engine, Float(-10 - step))
            cycles.append(UInt32(driver.renderSilentCycle()))
        }

        // The watcher looked too late to tell: it counts the value as applied by the oldest
        // later value it still knows, in that value's cycle.
        #expect(acknowledgement(engine, skipped) == .beyondHistory(cycle: cycles[0]))
        #expect(try await engine.waitUntilApplied(skipped, timeout: .seconds(5)) == cycles[0])
    }

    @Test func aHistoryReadDuringAnAudioThreadWriteIsNotTrusted() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        let older = try submitGain(engine, -6)
        _ = try submitGain(engine, -12)
        driver.renderSilentCycle()
        let writes = engine.mailbox.realtime.historyWrites + gain.rawValue
        let settled = writes.pointee.load(ordering: .relaxed)

        // The counter is odd while the audio thread writes an entry: the reader asks again later.
        writes.pointee.store(settled + 1, ordering: .relaxed)
        #expect(acknowledgement(engine, older) == .waiting)
        writes.pointee.store(settled, ordering: .relaxed)
        #expect(acknowledgement(engine, older) == .superseded)
    }

    @Test func restoreTakesBackOnlyWhereNothingNewerWasPublished() throws {
        let engine = AudioEngine()
        let failed = try submitGain(engine, -6)
        let newer = try submitGain(engine, -12)

        let skipped = engine.restore([(gain, .float(0))], replacing: failed)
        #expect(skipped.sequences.isEmpty)
        #expect(engine.value(of: gain) == .float(-12))

        let restored = engine.restore([(gain, .float(0))], replacing: newer)
        #expect(restored.sequences.count == 1)
        #expect(engine.value(of: gain) == .float(0))
        #expect(engine.mailbox.publishedSequence(index: gain.rawValue) == restored.sequences[0])
    }

    /// A real concurrent audio thread, a flood of values and reads racing the audio thread's
    /// writes: the answers for one sequence never contradict each other (a torn read of the
    /// history would report a value superseded that was applied, or the reverse), and the last
    /// value ends applied.
    ///
    /// The flood goes on, 20 000 values a round, until the audio thread both applied a value and
    /// went past one while the reads raced it (30 s at most): on a busy machine (this tier once
    /// ran at idle priority beside the JACK tests) one round passed without the audio thread
    /// running at all.
    @Test func readsRacingTheAudioThreadNeverContradictEachOther() async throws {
        let engine = AudioEngine()
        let running = Atomic<Bool>(true)
        let stopped = Atomic<Bool>(false)
        let audio = Thread {
            var driver = InMemoryDriver(engine: engine, blockSize: 16, channelCount: 1)
            while running.load(ordering: .acquiring) { driver.renderSilentCycle() }
            stopped.store(true, ordering: .releasing)
        }
        audio.start()

        var answers: [UInt32: Set<String>] = [:]
        var recent: [UInt32] = []
        var sawApplied = false, sawSuperseded = false
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            for index in 0..<20_000 {
                recent.append(try submitGain(engine, Float(-(index % 60))).sequences[0])
                if recent.count > 4 { recent.removeFirst() }
                for sequence in recent {
                    switch engine.mailbox.acknowledgement(of: sequence, index: gain.rawValue) {
                    case .waiting, .beyondHistory: break
                    case .applied(let cycle):
                        answers[sequence, default: []].insert("applied \(cycle)")
                        sawApplied = true
                    case .superseded:
                        answers[sequence, default: []].insert("superseded")
                        sawSuperseded = true
                    }
                }
            }
        } while !(sawApplied && sawSuperseded) && ContinuousClock.now < deadline
        let last = recent.last!
        while case .waiting = engine.mailbox.acknowledgement(of: last, index: gain.rawValue) { await Task.yield() }
        running.store(false, ordering: .releasing)
        while !stopped.load(ordering: .acquiring) { await Task.yield() }

        let contradictions = answers.filter { $0.value.count > 1 }
        #expect(contradictions.isEmpty, "\(contradictions.count) sequences with contradicting answers: \(contradictions.prefix(3))")
        #expect(answers.values.contains { $0.contains("superseded") }, "the flood overtook nothing: not a test of overlap")
        #expect(answers.values.contains { $0.first?.hasPrefix("applied") == true })
        guard case .applied = engine.mailbox.acknowledgement(of: last, index: gain.rawValue) else {
            Issue.record("the last value was not applied")
            return
        }
    }
}
