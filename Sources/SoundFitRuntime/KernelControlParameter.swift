import Synchronization
import SoundFitModel
import SoundFitEngine
import SoundFitProcessing

/// A kernel parameter (filter, ring modulator, output gain): a `ProcessingParameter` whose
/// applicator is the audio engine, so a change is `applied` only when the audio thread
/// acknowledged the cycle in which it took effect.
final class KernelControlParameter: ControlParameter {
    let descriptor: ParameterDescriptor
    /// The engine slot the entry is bound to.
    let slot: EngineSlot
    let parameter: ProcessingParameter<ParameterValue>
    private let engine: AudioEngine
    /// Held strongly: the parameter holds its applicators weakly.
    private let applicator = Mutex<ParameterApplicator<ParameterValue>?>(nil)

    /// `descriptor` is a kernel entry of the model (bound to an engine slot).
    init(_ descriptor: ParameterDescriptor, engine: AudioEngine, controller: ProcessingController) {
        guard let slot = descriptor.binding?.engineSlot else { preconditionFailure("\(descriptor.address) is not bound to an engine slot") }
        self.descriptor = descriptor
        self.slot = slot
        self.engine = engine
        // The one validation of a kernel request: against the entry, when it is accepted.
        parameter = controller.makeParameter(engine.value(of: slot), address: descriptor.address) { value in
            try descriptor.validate(value)
        }
    }

    /// Adds the engine applicator, a streaming one: values stream into the audio engine without
    /// waiting for one another (continuous delivery overlaps them). Its `submit` publishes the
    /// value to the audio thread at once (under the parameter's lock, so in request order); its
    /// confirmation waits for the audio thread's exact acknowledgement: applied in the cycle that
    /// took it, or `ProcessingParameterError.superseded` when the audio thread went straight to a
    /// newer value. When the wait fails (no server, stalled server) it puts the parameter's kept
    /// value back into the mailbox — only if nothing newer was published to the slot since, so a
    /// failed value never undoes a newer one in flight, and the audio thread never keeps a value
    /// the parameter reported as failed. Control side (the parameter's tasks).
    ///
    /// While `batches` has a batch open (an OSC bundle, a patch), the value joins it and is
    /// published with the batch, once.
    ///
    /// A scheduled value (a request with a time) is scheduled in the engine for that moment
    /// (with its batch, if one for the same moment is open): its confirmation starts then (the
    /// parameter's deadline counts the delay). One that fails is taken back from the schedule,
    /// so it never takes effect later.
    ///
    /// The confirmation bounds itself (the acknowledgement watcher times out at the parameter's
    /// deadline), so the parameter awaits it without a racing task and timer per value.
    func attachEngine(batches: OpenEngineBatch) {
        let engine = self.engine
        let slot = self.slot
        let handle = parameter.addStreamingApplicator(boundedScheduling: { [weak parameter] value, time in
            let batch = batches.batch
            let position = batch?.add(slot, value, at: time)
            let published = position == nil ? try engine.submit(validated: [(slot, value)], at: time) : nil
            return { [weak parameter] within in
                let deadline = ContinuousClock.now + within
                var submission = published
                if let batch, let position { submission = try await batch.submission(at: position) }
                guard let submission else { return }
                do {
                    try await engine.waitUntilApplied(submission, by: deadline)
                } catch EngineError.superseded {
                    throw ProcessingParameterError.superseded
                } catch {
                    engine.cancel(submission)
                    if let kept = parameter?.value {
                        engine.restore([(slot, kept)], replacing: submission)
                    }
                    throw error
                }
            }
        })
        applicator.withLock { $0 = handle }
    }

    /// Marks the engine applicator out of date (the audio engine lost or may have lost the value).
    func invalidateEngine() {
        if let handle = applicator.withLock({ $0 }) { parameter.invalidate(handle) }
    }

    func currentValue() throws -> ParameterValue { parameter.value }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> { parameter.updateState }

    func check(_ value: ParameterValue) throws {
        try ControlError.refusing { try parameter.check(value) }
    }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        try request(value, origin: origin, at: nil)
    }

    /// A request that takes effect at `time` (nil: now), at the frame of the audio cycle that
    /// contains it.
    func request(_ value: ParameterValue, origin: RequestOrigin?, at time: EngineTime?) throws -> ParameterRequest<ParameterValue> {
        try ControlError.refusing { try parameter.request(value, origin: origin, at: time) }
    }
}
