import SoundFitDSP
import SoundFitModel
import Synchronization

/// Runs the processing chain for one driver (a JACK client, or the in-memory driver in tests),
/// taking parameter changes from the mailbox at the start of every cycle and acknowledging them.
///
/// Created and destroyed off the audio thread (it allocates); `render` and `setSampleRate`
/// are real-time safe and may only be called on the audio thread.
public struct RealtimeRenderer: ~Copyable {
    private var chain: ProcessingChain
    private var settings: ChainSettings
    private let mailbox: RealtimeMailbox
    /// The slot words already applied, per parameter.
    private let applied: UnsafeMutablePointer<UInt64>
    /// Scratch for one consistent read of all slots.
    private let snapshot: UnsafeMutablePointer<UInt64>
    /// A retired preset the full retire ring could not take yet (handed back next cycle).
    private var heldRetirement: Unmanaged<PreparedPersonalization>?
    /// The hearing test's stimulus, which replaces the chain's stages in test mode.
    private var stimulus: StimulusStage

    /// Allocates the chain for `spec`, starting from the values currently in the mailbox.
    /// The first rendered cycle acknowledges them all. Control thread.
    public init(spec: ProcessingSpec, mailbox: RealtimeMailbox) {
        self.mailbox = mailbox
        let count = mailbox.parameterCount
        applied = .allocate(capacity: count)
        snapshot = .allocate(capacity: count)
        while !mailbox.snapshot(into: snapshot) {}
        var settings = ChainSettings()
        for index in 0..<count {
            let parameter = EngineSlot(rawValue: index)!
            parameter.store(RealtimeMailbox.low(snapshot[index]), into: &settings)
            // Not yet acknowledged: the first cycle applies and acknowledges every slot.
            applied[index] = .max
        }
        self.settings = settings
        stimulus = StimulusStage(spec: spec, mailbox: mailbox.stimulus)
        chain = ProcessingChain(
            spec: spec, settings: settings,
            personalizationTechLevel: mailbox.personalization.techLevel.pointee.load(ordering: .acquiring))
        mailbox.sampleRate.pointee.store(spec.sampleRate.bitPattern, ordering: .releasing)
    }

    /// Control thread: the chain's installed preset and any held retirement are released here.
    deinit {
        chain.installedPersonalization?.release()
        heldRetirement?.release()
        applied.deallocate()
        snapshot.deallocate()
    }

    /// The processing format the chain was prepared for.
    public var spec: ProcessingSpec { chain.spec }

    /// Follows a server sample-rate change. Real-time safe.
    public mutating func setSampleRate(_ sampleRate: Double) {
        chain.setSampleRate(sampleRate)
        stimulus.setSampleRate(sampleRate)
        mailbox.sampleRate.pointee.store(sampleRate.bitPattern, ordering: .releasing)
    }

    /// Renders one cycle: applies pending parameter changes, acknowledges them with this
    /// cycle's index, then processes `frameCount` frames. Returns the cycle index.
    /// Real-time safe: no allocation, no locks, wait-free.
    @discardableResult
    public mutating func render(inputs: UnsafePointer<UnsafePointer<Float>>,
                                outputs: UnsafePointer<UnsafeMutablePointer<Float>>,
                                frameCount: Int) -> UInt64 {
        let cycle = mailbox.beginCycle()
        takePersonalizationChanges()
        takeParameterChanges(cycle: cycle)
        chain.setOutputCeiling(Float(bitPattern: mailbox.outputCeiling.pointee.load(ordering: .relaxed)))
        if !stimulus.process(chain: &chain, inputs: inputs, outputs: outputs, frameCount: frameCount, cycle: cycle) {
            chain.process(inputs: inputs, outputs: outputs, frameCount: frameCount)
        }
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

    @inline(__always)
    private mutating func takeParameterChanges(cycle: UInt64) {
        // A read that raced a batch is retried next cycle: the batch lands whole or not at all.
        guard mailbox.snapshot(into: snapshot) else { return }
        var changed = false
        for index in 0..<mailbox.parameterCount where snapshot[index] != applied[index] {
            let parameter = EngineSlot(rawValue: index).unsafelyUnwrapped
            parameter.store(RealtimeMailbox.low(snapshot[index]), into: &settings)
            changed = true
        }
        guard changed else { return }
        chain.apply(settings)
        for index in 0..<mailbox.parameterCount where snapshot[index] != applied[index] {
            applied[index] = snapshot[index]
            mailbox.acknowledge(index: index, sequence: RealtimeMailbox.high(snapshot[index]), cycle: cycle)
        }
    }
}
