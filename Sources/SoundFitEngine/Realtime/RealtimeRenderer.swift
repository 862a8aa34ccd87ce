import SoundFitDSP
import SoundFitModel
import Synchronization

/// Runs the processing chain for one driver (a JACK client, or the in-memory driver in tests),
/// taking parameter changes from the mailbox at the start of every cycle and acknowledging them.
///
/// Scheduled changes (`ScheduledChanges`) are applied at their frame: the cycle is rendered in
/// parts, up to that frame with the settings before, from it with the new ones (each kernel
/// starts its ramp there). Per slot, the newest change by sequence wins, whichever way it came:
/// a value published after a scheduled one supersedes it when it takes effect first, and a
/// published value older than a scheduled one already applied is not taken.
///
/// Created and destroyed off the audio thread (it allocates); `render` and `setSampleRate`
/// are real-time safe and may only be called on the audio thread.
public struct RealtimeRenderer: ~Copyable {
    private var chain: ProcessingChain
    private var settings: ChainSettings
    private let mailbox: RealtimeMailbox
    /// The slot words already taken from the mailbox's slots, per parameter.
    private let taken: UnsafeMutablePointer<UInt64>
    /// The sequence of the change in effect, per parameter (from a slot or a scheduled batch).
    private let appliedSequences: UnsafeMutablePointer<UInt32>
    /// False until the first cycle acknowledged the starting values.
    private var acknowledgedStart = false
    /// Scratch: the scheduled records due in this cycle, earliest first.
    private let dueRecords: UnsafeMutablePointer<Int>
    /// Scratch: the channel pointers offset to the part of the cycle being rendered.
    private let partInputs: UnsafeMutablePointer<UnsafePointer<Float>>
    private let partOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Scratch for one consistent read of all slots.
    private let snapshot: UnsafeMutablePointer<UInt64>
    /// The mailbox generation of the last snapshot taken: an unchanged generation means no
    /// slot changed, and the cycle reads none.
    private var snapshotGeneration = RealtimeMailbox.noGeneration
    /// `ScheduledChanges.added` at the last scan that found no batch waiting.
    private var scheduledSettled: UInt64 = 0
    /// A retired preset the full retire ring could not take yet (handed back next cycle).
    private var heldRetirement: Unmanaged<PreparedPersonalization>?
    /// The hearing test's stimulus, which replaces the chain's stages in test mode.
    private var stimulus: StimulusStage
    /// The live meters, idle while nobody listens.
    private var meters: MeterStage

    /// Allocates the chain for `spec`, starting from the values currently in the mailbox.
    /// The first rendered cycle acknowledges them all. Control thread.
    public init(spec: ProcessingSpec, mailbox: RealtimeMailbox) {
        self.mailbox = mailbox
        let count = mailbox.parameterCount
        taken = .allocate(capacity: count)
        appliedSequences = .allocate(capacity: count)
        snapshot = .allocate(capacity: count)
        dueRecords = .allocate(capacity: ScheduledChanges.capacity)
        dueRecords.initialize(repeating: 0, count: ScheduledChanges.capacity)
        let placeholder = UnsafeMutablePointer<Float>(bitPattern: 0x10)!
        partInputs = .allocate(capacity: spec.channelCount)
        partInputs.initialize(repeating: UnsafePointer(placeholder), count: spec.channelCount)
        partOutputs = .allocate(capacity: spec.channelCount)
        partOutputs.initialize(repeating: placeholder, count: spec.channelCount)
        while !mailbox.snapshot(into: snapshot) {}
        var settings = ChainSettings()
        for index in 0..<count {
            // The slot's word, or the one a previous renderer applied when that is newer (a
            // scheduled value it applied before a JACK restart). The first cycle acknowledges
            // every slot word taken here.
            let applied = mailbox.appliedWords[index].load(ordering: .acquiring)
            let word = Self.isNewer(RealtimeMailbox.high(applied), than: RealtimeMailbox.high(snapshot[index]))
                ? applied : snapshot[index]
            EngineSlot(rawValue: index)!.store(RealtimeMailbox.low(word), into: &settings)
            taken[index] = snapshot[index]
            appliedSequences[index] = RealtimeMailbox.high(word)
        }
        self.settings = settings
        stimulus = StimulusStage(spec: spec, mailbox: mailbox.stimulus)
        meters = MeterStage(channelCount: spec.channelCount, mailbox: mailbox.meters)
        chain = ProcessingChain(
            spec: spec, settings: settings,
            personalizationTechLevel: mailbox.personalization.techLevel.pointee.load(ordering: .acquiring))
        mailbox.sampleRate.pointee.store(spec.sampleRate.bitPattern, ordering: .releasing)
    }

    /// Control thread: the chain's installed preset and any held retirement are released here.
    deinit {
        chain.installedPersonalization?.release()
        heldRetirement?.release()
        taken.deallocate()
        appliedSequences.deallocate()
        snapshot.deallocate()
        dueRecords.deallocate()
        partInputs.deallocate()
        partOutputs.deallocate()
    }

    /// The processing format the chain was prepared for.
    public var spec: ProcessingSpec { chain.spec }

    /// Clears the chain's filter states, resets the ring modulator's phase and jumps every ramp
    /// to its target (`ProcessingChain.reset`): a defined start for offline rendering. Called by
    /// the renderer's owner (the thread that renders). Real-time safe.
    public mutating func resetChain() {
        chain.reset()
    }

    /// Whether a scheduled batch may be waiting: only then does `render` need the cycle's
    /// `time` (a driver can skip asking for it otherwise). Real-time safe: one load.
    public var mayHaveScheduledChanges: Bool { mailbox.scheduled.mayHaveReady(settled: scheduledSettled) }

    /// Follows a server sample-rate change. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        chain.setSampleRate(sampleRate)
        stimulus.setSampleRate(sampleRate)
        mailbox.sampleRate.pointee.store(sampleRate.bitPattern, ordering: .releasing)
    }

    /// Renders one cycle: applies pending parameter changes, acknowledges them with this
    /// cycle's index, then processes `frameCount` frames — applying the scheduled changes due
    /// in this cycle at their frames when `time` (the cycle's span on the engine clock) is given;
    /// without it, scheduled changes wait. Returns the cycle index.
    /// Real-time safe: no allocation, no locks, wait-free.
    @discardableResult
    public mutating func render(inputs: UnsafePointer<UnsafePointer<Float>>,
                                outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                                frameCount: Int, time: CycleTime? = nil) -> UInt64 {
        let cycle = mailbox.beginCycle()
        takePersonalizationChanges()
        // The slots are visited only when a batch was published since the last snapshot (checked
        // here, inline: an ordinary cycle does not call into `takeParameterChanges`).
        if mailbox.generation.pointee.load(ordering: .acquiring) != snapshotGeneration {
            takeParameterChanges(cycle: cycle)
        }
        chain.setOutputCeilings(left: Float(bitPattern: mailbox.outputCeiling[0].load(ordering: .relaxed)),
                                right: Float(bitPattern: mailbox.outputCeiling[1].load(ordering: .relaxed)))
        let metering = meters.begin()
        if metering { meters.measureInputs(inputs, frameCount: frameCount) }
        var due = 0
        if let time, mailbox.scheduled.mayHaveReady(settled: scheduledSettled) {
            due = mailbox.scheduled.collectDue(before: time.end.microseconds, into: dueRecords, settled: &scheduledSettled)
        }
        let testCeiling = Float(bitPattern: mailbox.outputCeiling[2].load(ordering: .relaxed))
        if !stimulus.isQuiet,
           stimulus.process(chain: &chain, inputs: inputs, outputs: outputs, frameCount: frameCount, cycle: cycle,
                            ceiling: testCeiling) {
            // The hearing test's stimulus is the output: scheduled changes due now still take
            // effect (for the chain's next run), without rendering.
            if let time, due > 0 {
                applyScheduled(inputs: inputs, outputs: outputs, frameCount: frameCount, time: time, due: due,
                               cycle: cycle, rendering: false)
            }
        } else if let time, due > 0 {
            applyScheduled(inputs: inputs, outputs: outputs, frameCount: frameCount, time: time, due: due,
                           cycle: cycle, rendering: true)
        } else {
            chain.process(inputs: inputs, outputs: outputs, frameCount: frameCount)
        }
        if metering { meters.finish(outputs, frameCount: frameCount, chain: chain) }
        let reduction = chain.takeOutputLimitReduction()
        if reduction < 1 {
            // Keep the smallest gain until the control side takes it.
            let published = mailbox.outputLimitReduction.pointee.load(ordering: .relaxed)
            if reduction < Float(bitPattern: published) {
                mailbox.outputLimitReduction.pointee.store(reduction.bitPattern, ordering: .relaxed)
            }
        }
        return cycle
    }

    /// Follows the session's tech level and installs (or removes) the next preset, handing
    /// every replaced preset back to the control side. Real-time safe: pointer moves only.
    @inline(__always)
    private mutating func takePersonalizationChanges() {
        let personalization = mailbox.personalization
        if let held = heldRetirement {
            guard personalization.retire(held) else { return }
            heldRetirement = nil
        }
        let techLevel = personalization.techLevel.pointee.load(ordering: .acquiring)
        if techLevel != chain.personalizationTechLevel, let replaced = chain.setPersonalizationTechLevel(techLevel) {
            retire(replaced)
            return
        }
        let word = personalization.takeNext()
        guard word != 0 else { return }
        let generation = word >> 48
        guard let prepared = PersonalizationMailbox.unmanaged(word) else {
            if let removed = chain.removePersonalization() { retire(removed) }
            personalization.installedGeneration.pointee.store(generation, ordering: .releasing)
            return
        }
        switch chain.installPersonalization(prepared) {
        case .installed(let replaced):
            if let replaced { retire(replaced) }
            personalization.installedGeneration.pointee.store(generation, ordering: .releasing)
        case .rejected(let rejected):
            retire(rejected)
            personalization.rejectedGeneration.pointee.store(generation, ordering: .releasing)
        }
    }

    @inline(__always)
    private mutating func retire(_ prepared: Unmanaged<PreparedPersonalization>) {
        if !mailbox.personalization.retire(prepared) { heldRetirement = prepared }
    }

    /// Takes the slots' new words (all or none of a batch) and acknowledges them. A word older
    /// than the change in effect (a scheduled one that arrived after it) is passed over.
    @inline(__always)
    private mutating func takeParameterChanges(cycle: UInt64) {
        // Nothing published since the last snapshot: nothing to take. A read that raced a batch
        // is retried next cycle: the batch lands whole or not at all.
        guard let generation = mailbox.snapshot(into: snapshot, newerThan: snapshotGeneration) else { return }
        snapshotGeneration = generation
        var changed = false
        for index in 0..<mailbox.parameterCount where snapshot[index] != taken[index] {
            taken[index] = snapshot[index]
            let sequence = RealtimeMailbox.high(snapshot[index])
            guard Self.isNewer(sequence, than: appliedSequences[index]) else { continue }
            appliedSequences[index] = sequence
            EngineSlot(rawValue: index).unsafelyUnwrapped.store(RealtimeMailbox.low(snapshot[index]), into: &settings)
            mailbox.appliedWords[index].store(snapshot[index], ordering: .releasing)
            mailbox.acknowledge(index: index, sequence: sequence, cycle: cycle)
            changed = true
        }
        if !acknowledgedStart {
            acknowledgedStart = true
            for index in 0..<mailbox.parameterCount where appliedSequences[index] == RealtimeMailbox.high(taken[index]) {
                mailbox.acknowledge(index: index, sequence: appliedSequences[index], cycle: cycle)
            }
        }
        if changed { chain.apply(settings) }
    }

    /// Applies the due scheduled batches at their frames (their changes newer than the ones in
    /// effect), rendering the cycle in parts when `rendering`: up to each batch's frame with the
    /// settings in effect, then the batch, and so on.
    @inline(__always)
    private mutating func applyScheduled(inputs: UnsafePointer<UnsafePointer<Float>>,
                                         outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                                         frameCount: Int, time: CycleTime, due: Int, cycle: UInt64, rendering: Bool) {
        let scheduled = mailbox.scheduled
        var done = 0
        for position in 0..<due {
            let record = dueRecords[position]
            let frame = min(max(time.frame(of: EngineTime(microseconds: scheduled.times[record]), frameCount: frameCount),
                                done), frameCount)
            guard scheduled.take(record) else { continue }
            if rendering, frame > done {
                renderPart(inputs: inputs, outputs: outputs, from: done, count: frame &- done)
                done = frame
            }
            var changed = false
            let base = record &* scheduled.parameterCount
            for entry in 0..<scheduled.counts[record] {
                let index = scheduled.entryIndices[base &+ entry]
                let word = scheduled.entryWords[base &+ entry]
                let sequence = RealtimeMailbox.high(word)
                guard Self.isNewer(sequence, than: appliedSequences[index]) else { continue }
                appliedSequences[index] = sequence
                EngineSlot(rawValue: index).unsafelyUnwrapped.store(RealtimeMailbox.low(word), into: &settings)
                mailbox.appliedWords[index].store(word, ordering: .releasing)
                mailbox.acknowledge(index: index, sequence: sequence, cycle: cycle)
                changed = true
            }
            scheduled.release(record)
            if changed { chain.apply(settings) }
        }
        if rendering, frameCount > done {
            renderPart(inputs: inputs, outputs: outputs, from: done, count: frameCount &- done)
        }
    }

    /// Processes frames `from ..< from + count` of the cycle.
    @inline(__always)
    private mutating func renderPart(inputs: UnsafePointer<UnsafePointer<Float>>,
                                     outputs: UnsafePointer<UnsafeMutablePointer<Float>>, from: Int, count: Int) {
        for channel in 0..<chain.spec.channelCount {
            partInputs[channel] = inputs[channel] + from
            partOutputs[channel] = outputs[channel] + from
        }
        chain.process(inputs: partInputs, outputs: partOutputs, frameCount: count)
    }

    /// Whether sequence `a` was given after `b` (sequences wrap around).
    @inline(__always)
    static func isNewer(_ a: UInt32, than b: UInt32) -> Bool {
        Int32(bitPattern: a &- b) > 0
    }
}
