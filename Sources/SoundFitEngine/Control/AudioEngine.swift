import Foundation
import SoundFitDSP
import SoundFitModel
import Synchronization

/// The control side of the audio engine: publishes values to the audio thread and reports when
/// they took effect.
///
/// `submit` and `apply` validate against each slot's parameter entry, for callers that drive the
/// engine directly. The control plane validates every request once, where it is accepted, and
/// hands the engine values it already checked (`submit(validated:)`, `restore`).
///
/// A change counts as applied only when the audio thread acknowledged the cycle in which it
/// took effect; if no cycle runs (no server, a stalled server) `apply` fails with a timeout
/// instead of hanging or lying. Thread rules: every method may be called from any thread
/// except the audio thread.
public final class AudioEngine: Sendable {
    public let mailbox: EngineMailbox
    private let watcher: AcknowledgementWatcher
    /// Serializes preset hand-overs and numbers them (16-bit generations, 0 unused).
    private let presetGeneration = Mutex<UInt64>(0)
    /// Serializes tone commands and numbers them (see `AudioEngine+Stimulus.swift`).
    let toneCommands = Mutex<UInt64>(0)

    /// Creates the engine with every parameter at its value in `settings` and the
    /// personalization stage at `techLevel`.
    public init(settings: ChainSettings = ChainSettings(), techLevel: Int = 3) {
        mailbox = EngineMailbox(initialWords: EngineSlot.allCases.map { $0.load(from: settings) },
                                techLevel: techLevel)
        watcher = AcknowledgementWatcher(mailbox: mailbox)
    }

    /// A renderer for a driver with this format, starting from the current values. Control thread.
    public func makeRenderer(spec: ProcessingSpec) -> RealtimeRenderer {
        RealtimeRenderer(spec: spec, mailbox: mailbox.realtime)
    }

    /// The value most recently published for `parameter` (what the engine is, or is about to be, running).
    public func value(of parameter: EngineSlot) -> ParameterValue {
        parameter.decode(mailbox.publishedBits(index: parameter.rawValue))
    }

    /// All current values as chain settings.
    public var settings: ChainSettings {
        var settings = ChainSettings()
        for parameter in EngineSlot.allCases {
            parameter.store(mailbox.publishedBits(index: parameter.rawValue), into: &settings)
        }
        return settings
    }

    /// Validates `changes`, publishes them as one batch (they take effect in the same cycle) and
    /// waits until the audio thread acknowledged them. Returns the cycle index (low 32 bits).
    /// Throws `ParameterError` for an invalid value (nothing is published),
    /// `EngineError.superseded` when a newer value of one of the parameters, published after
    /// this batch, reached the audio thread first (this one was never rendered), and
    /// `EngineError.timeout` when no acknowledgement arrives within `timeout`.
    @discardableResult
    public func apply(_ changes: [(EngineSlot, ParameterValue)], timeout: Duration) async throws -> UInt32 {
        let submission = try submit(changes)
        return try await waitUntilApplied(submission, timeout: timeout)
    }

    /// Validates and publishes `changes` as one batch without waiting. Throws `ParameterError`
    /// for an invalid value (nothing is published).
    public func submit(_ changes: [(EngineSlot, ParameterValue)]) throws(ParameterError) -> EngineSubmission {
        for (slot, value) in changes {
            try slot.descriptor.validate(value)
        }
        return submit(validated: changes)
    }

    /// Publishes `changes`, already validated against their entries, as one batch without
    /// waiting. Callers that must keep the order of requests (a surface's receive thread) submit
    /// synchronously, then wait.
    public func submit(validated changes: [(EngineSlot, ParameterValue)]) -> EngineSubmission {
        assert(Self.areValid(changes), "unvalidated values reached the engine")
        let sequences = mailbox.publish(changes.map { (index: $0.0.rawValue, bits: $0.0.encode($0.1)) })
        return EngineSubmission(targets: zip(changes, sequences).map { (index: $0.0.rawValue, sequence: $1) })
    }

    /// `submit(validated:)` for `time`: the audio thread applies the batch at the frame of the
    /// cycle that contains that moment (at the start of its next cycle when the moment has
    /// passed); nil publishes at once. Throws `EngineError.scheduleFull` (nothing is scheduled)
    /// when `ScheduledChanges.capacity` batches already wait for their moment.
    public func submit(validated changes: [(EngineSlot, ParameterValue)],
                       at time: EngineTime?) throws(EngineError) -> EngineSubmission {
        guard let time else { return submit(validated: changes) }
        assert(Self.areValid(changes), "unvalidated values reached the engine")
        guard let (sequences, ticket) = mailbox.schedule(
            changes.map { (index: $0.0.rawValue, bits: $0.0.encode($0.1)) }, at: time)
        else { throw .scheduleFull(capacity: ScheduledChanges.capacity) }
        return EngineSubmission(targets: zip(changes, sequences).map { (index: $0.0.rawValue, sequence: $1) },
                                scheduled: ticket, time: time)
    }

    /// Whether a batch can be scheduled now (`submit(validated:at:)` would not throw
    /// `scheduleFull`, unless another caller takes the last place first).
    public var canSchedule: Bool { mailbox.canSchedule }

    /// Takes back the scheduled batch of `submission` unless the audio thread already applied
    /// it (a scheduled change that failed, so it never takes effect later). Returns whether it
    /// was taken back.
    @discardableResult
    public func cancel(_ submission: EngineSubmission) -> Bool {
        guard let ticket = submission.scheduled else { return false }
        return mailbox.cancel(ticket)
    }

    /// Waits until the audio thread acknowledged every change of `submission`. Returns the
    /// cycle index (low 32 bits) of the latest. Several submissions of one parameter may be
    /// waited on at once: each is resolved exactly, and one the audio thread skipped because a
    /// newer submission reached it first throws `EngineError.superseded`. (A waiter that looks
    /// only after more than `RealtimeMailbox.historyDepth` newer values were taken cannot tell
    /// and counts the change as applied.) Throws `EngineError.timeout` when not resolved within
    /// `timeout`, `CancellationError` when the waiting task is cancelled. For a scheduled
    /// submission the wait, and its timeout, start at its moment (nothing polls before).
    @discardableResult
    public func waitUntilApplied(_ submission: EngineSubmission, timeout: Duration) async throws -> UInt32 {
        try await sleepUntilMoment(of: submission)
        return try await watcher.wait(for: submission.targets, timeout: timeout)
    }

    /// `waitUntilApplied(_:timeout:)` that ends by `deadline` (a scheduled submission's wait
    /// still starts at its moment): `EngineError.timeout` when not resolved by then.
    @discardableResult
    public func waitUntilApplied(_ submission: EngineSubmission, by deadline: ContinuousClock.Instant) async throws -> UInt32 {
        try await sleepUntilMoment(of: submission)
        // With no time left, one look at the acknowledgements still decides.
        let left = max(ContinuousClock.now.duration(to: deadline), .zero)
        return try await watcher.wait(for: submission.targets, timeout: left)
    }

    /// A scheduled submission cannot be acknowledged before its moment: nothing polls until then.
    private func sleepUntilMoment(of submission: EngineSubmission) async throws {
        guard let time = submission.time else { return }
        let delay = time.seconds(since: .now)
        if delay > 0 { try await Task.sleep(for: .microseconds(Int64(delay * 1e6))) }
    }

    /// Takes back a change that failed: publishes `changes` (usually the values the caller keeps
    /// as current) only to the slots whose latest value is still the one `submission` published
    /// there. A slot to which a newer value was published since keeps that newer value, so a
    /// failed change never undoes a newer one in flight. Returns the submission of what was
    /// published (empty when every slot had moved on). The values must be valid.
    @discardableResult
    public func restore(_ changes: [(EngineSlot, ParameterValue)],
                        replacing submission: EngineSubmission) -> EngineSubmission {
        assert(Self.areValid(changes), "unvalidated values reached the engine")
        // A slot the submission did not publish to is left alone.
        let restorable = changes.compactMap { parameter, value -> (index: Int, bits: UInt32, expected: UInt32?)? in
            guard let target = submission.targets.first(where: { $0.index == parameter.rawValue }) else { return nil }
            return (index: parameter.rawValue, bits: parameter.encode(value), expected: target.sequence)
        }
        let sequences = mailbox.publish(restorable)
        return EngineSubmission(targets: zip(restorable, sequences).compactMap { change, sequence in
            sequence.map { (index: change.index, sequence: $0) }
        })
    }

    /// Debug check: whether every value is valid for its slot's entry.
    private static func areValid(_ changes: [(EngineSlot, ParameterValue)]) -> Bool {
        changes.allSatisfy { (try? $0.0.descriptor.validate($0.1)) != nil }
    }

    // MARK: Personalization presets

    /// The tech level of the personalization stage (the session's). Setting it removes
    /// the installed preset on the audio thread at the next cycle: set it before installing a
    /// preset made for it.
    public var personalizationTechLevel: Int {
        get { mailbox.realtime.personalization.techLevel.pointee.load(ordering: .acquiring) }
        set { mailbox.realtime.personalization.techLevel.pointee.store(newValue, ordering: .releasing) }
    }

    /// The sample rate the audio thread runs at, or nil before the first renderer.
    public var sampleRate: Double? {
        let bits = mailbox.realtime.sampleRate.pointee.load(ordering: .acquiring)
        return bits == 0 ? nil : Double(bitPattern: bits)
    }

    /// Prepares `preset` off the audio thread (for the current sample rate and tech level),
    /// hands it to the audio thread and waits until the audio thread installed it; nil removes
    /// the preset. Throws the preparation error (invalid preset, other tech level), a rejection,
    /// or `EngineError.timeout` when no cycle runs. The replaced preset is freed here, on the
    /// control side, after the audio thread gave it back.
    public func installPersonalization(_ preset: PresetPayload?, timeout: Duration) async throws {
        let personalization = mailbox.realtime.personalization
        var pointer: UInt64 = 0
        if let preset {
            let prepared = try PreparedPersonalization(
                preset: preset, sampleRate: sampleRate ?? 48000, techLevel: personalizationTechLevel)
            pointer = UInt64(UInt(bitPattern: Unmanaged.passRetained(prepared).toOpaque()))
        }
        let generation = presetGeneration.withLock { generation -> UInt64 in
            generation = generation % 0xFFFF + 1
            let previous = personalization.next.pointee.exchange(generation << 48 | pointer, ordering: .acquiringAndReleasing)
            // A preset the audio thread never took is still ours to free.
            PersonalizationMailbox.unmanaged(previous)?.release()
            return generation
        }
        // The audio thread acknowledges the hand-over in the installed or rejected generation;
        // the acknowledgement watcher polls for it with the parameters' acknowledgements.
        do {
            _ = try await watcher.wait(until: { [self] in
                let personalization = mailbox.realtime.personalization
                // One releaser at a time: the preset hand-over lock serializes them.
                presetGeneration.withLock { _ in personalization.releaseRetired() }
                if personalization.installedGeneration.pointee.load(ordering: .acquiring) == generation {
                    return .success(0)
                }
                if personalization.rejectedGeneration.pointee.load(ordering: .acquiring) == generation {
                    return .failure(EngineError.presetRejected)
                }
                return nil
            }, timeout: timeout)
        } catch let error as EngineError where error != .presetRejected {
            // Take the word back unless the audio thread took it meanwhile.
            let word = presetGeneration.withLock { _ in
                personalization.next.pointee.load(ordering: .acquiring) >> 48 == generation
                    ? personalization.next.pointee.exchange(0, ordering: .acquiringAndReleasing) : 0
            }
            PersonalizationMailbox.unmanaged(word)?.release()
            throw error
        }
    }

    /// Cycles rendered so far by every renderer of this engine.
    public var cycleCount: UInt64 { mailbox.cycleCount }

    /// The output safety limit: no output sample exceeds `ceiling` (linear peak; `.infinity`
    /// lifts the limit). Takes effect in the next cycle. Any thread but the audio thread.
    public func setOutputCeiling(_ ceiling: Float) {
        setOutputCeilings(left: ceiling, right: ceiling, hearingTest: ceiling)
    }

    /// The output safety limit per ear (`OutputLimiter`: channels in pairs, first of a pair
    /// left, mono left): no sample of an ear exceeds its ceiling (linear peak; `.infinity` lifts
    /// it). `hearingTest`: the ceiling of both ears while the hearing test's stimulus plays (the
    /// test must reach the maximum output, above a profile's derived maximum; default: the
    /// higher ear's). Takes effect in the next cycle. Any thread but the audio thread.
    public func setOutputCeilings(left: Float, right: Float, hearingTest: Float? = nil) {
        let test = hearingTest ?? max(left, right)
        precondition([left, right, test].allSatisfy { $0 > 0 && !$0.isNaN })
        mailbox.realtime.outputCeiling[0].store(left.bitPattern, ordering: .relaxed)
        mailbox.realtime.outputCeiling[1].store(right.bitPattern, ordering: .relaxed)
        mailbox.realtime.outputCeiling[2].store(test.bitPattern, ordering: .relaxed)
    }

    /// The output safety limit's ceiling now (linear peak): the lower of the two ears'.
    public var outputCeiling: Float { min(outputCeilings.left, outputCeilings.right) }

    /// Each ear's ceiling now, and the hearing test's (linear peak).
    public var outputCeilings: (left: Float, right: Float, hearingTest: Float) {
        (Float(bitPattern: mailbox.realtime.outputCeiling[0].load(ordering: .relaxed)),
         Float(bitPattern: mailbox.realtime.outputCeiling[1].load(ordering: .relaxed)),
         Float(bitPattern: mailbox.realtime.outputCeiling[2].load(ordering: .relaxed)))
    }

    /// The largest reduction the output limit applied since the last call, in dB (0 = none).
    /// A racing audio-thread update may land in the next interval; nothing is lost for long.
    public func takeOutputLimitReduction() -> Double {
        let bits = mailbox.realtime.outputLimitReduction.pointee.exchange(Float(1).bitPattern, ordering: .relaxed)
        return -20 * log10(Double(Float(bitPattern: bits)))
    }
}

/// Why the engine could not apply a change.
public enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No audio cycle acknowledged the change in time.
    case timeout(seconds: Double)
    /// The audio thread refused a preset (made for another tech level or sample rate).
    case presetRejected
    /// A newer value of the same parameter reached the audio thread first: this one was never
    /// rendered (not a failure: the newer value took its place).
    case superseded
    /// Every place for scheduled batches is taken (`ScheduledChanges.capacity`).
    case scheduleFull(capacity: Int)

    public var description: String {
        switch self {
        case .timeout(let seconds):
            "the audio engine did not apply the change within \(seconds) s (is the JACK server running?)"
        case .presetRejected:
            "the audio engine rejected the preset (made for another tech level or sample rate)"
        case .superseded:
            "a newer value reached the audio engine first; this one was never rendered"
        case .scheduleFull(let capacity):
            "\(capacity) scheduled changes are already waiting for their time; try again later"
        }
    }
}

/// A published batch of changes, to wait on.
public struct EngineSubmission: Sendable {
    let targets: [(index: Int, sequence: UInt32)]
    /// The batch waiting for its moment, for a scheduled submission.
    let scheduled: ScheduledTicket?
    /// When a scheduled submission takes effect; nil: at once.
    public let time: EngineTime?

    init(targets: [(index: Int, sequence: UInt32)], scheduled: ScheduledTicket? = nil, time: EngineTime? = nil) {
        self.targets = targets
        self.scheduled = scheduled
        self.time = time
    }

    /// The sequence number each change was published with, in order.
    public var sequences: [UInt32] { targets.map(\.sequence) }

    /// The part of this submission that published its `position`th change, to wait on alone.
    public func change(at position: Int) -> EngineSubmission {
        EngineSubmission(targets: [targets[position]], scheduled: scheduled, time: time)
    }
}
