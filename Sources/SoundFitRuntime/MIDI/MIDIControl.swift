import Synchronization
import SoundFitEngine
import SoundFitModel
import SoundFitProcessing
import SoundFitState

/// Who made a change with MIDI: the origin of every request a control change makes, so
/// subscribers see it as a change made by another client.
public struct MIDIOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The JACK port the message came in on (its short name).
    public let port: String
    public var description: String { "MIDI \(port)" }
}

/// What MIDI control reports on its own, for the log and for subscribers.
public enum MIDIControlReport: Sendable, Equatable {
    /// A program change that loaded a factory patch.
    case programLoaded(channel: Int, program: Int, name: String)
    /// A MIDI message that changed nothing, and why (`address`: what it tried: `/midi/program`
    /// or the parameter's address).
    case refused(address: String, reason: String)
    /// Events the audio thread dropped on a full ring since the last report.
    case dropped(count: UInt64)
}

/// The control side of MIDI control: the mappings (kept in the state), MIDI learn, and the loop
/// that turns what the audio thread found in the MIDI stream into requests.
///
/// The audio thread looks each control change up in `MIDIControlInput`'s table and writes the
/// parameter and the 0…127 value into its ring; `run()` drains the ring every
/// `MIDIControlInput.pollInterval` while a port is connected to the MIDI input, keeps the last
/// value of each parameter (a fast fader coalesces into one request per drain), and requests
/// them together through
/// `SoundFitRuntime.requestBatch` with a `MIDIOrigin`: the same validation, mailbox, update
/// states and change feed as OSC. A program change N loads factory patch N through the state
/// keeper.
///
/// Thread rules: any thread except the audio thread.
public final class MIDIControl: Sendable {
    public let input: MIDIControlInput
    /// The origin of MIDI-made requests.
    public let origin: RequestOrigin
    /// How long `learn` waits for a control change unless told otherwise.
    public static let defaultLearnTimeout: Duration = .seconds(30)
    /// The learn timeouts a request may ask for.
    public static let learnTimeouts: ClosedRange<Int> = 1...600

    private let runtime: SoundFitRuntime
    private let keeper: StateKeeper?
    private let state: Mutex<State>
    private let reportContinuation: AsyncStream<MIDIControlReport>.Continuation
    /// Reports, for the surface and the log (the newest 64 are kept when nobody listens).
    public let reports: AsyncStream<MIDIControlReport>

    private struct State {
        var mappings: [MIDIMapping]
        var learning: Learning?
        var nextLearn = 0
        /// The last refusal reported, and when: the same one is reported again only after
        /// `refusalRepeatInterval` (a fader moved while its parameter cannot change would
        /// otherwise report every drain).
        var lastRefusal: (text: String, at: ContinuousClock.Instant)?
    }

    /// How often the same refusal is reported at most.
    public static let refusalRepeatInterval: Duration = .seconds(1)

    /// A learn waiting for its control change.
    private struct Learning {
        let id: Int
        let address: String
        let continuation: CheckedContinuation<MIDIMapping, any Error>
    }

    /// Why a learn ended without a mapping.
    public struct LearnEnded: Error, CustomStringConvertible {
        public let description: String
    }

    /// The JACK MIDI input port that feeds `input`; nil when there is none (`--no-midi`): the
    /// mappings are kept, but no control change can come, so a learn is refused.
    public let port: String?

    /// MIDI control for `runtime`, its mappings kept by `keeper` (restored from it); without a
    /// keeper they live as long as the process, and program changes are refused.
    public init(runtime: SoundFitRuntime, input: MIDIControlInput, keeper: StateKeeper?, port: String? = "midi_in") {
        self.runtime = runtime
        self.input = input
        self.keeper = keeper
        self.port = port
        origin = RequestOrigin(MIDIOrigin(port: port ?? "midi_in"))
        state = Mutex(State(mappings: keeper?.midiMappings ?? []))
        (reports, reportContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
        publishTable(state.withLock { $0.mappings })
    }

    // MARK: Mappings

    /// Every mapping, ordered by channel and controller.
    public var mappings: [MIDIMapping] { state.withLock { $0.mappings } }

    /// Checks what `map` would refuse, without changing anything.
    public func checkMap(_ mapping: MIDIMapping) throws(ControlError) {
        let mappings = self.mappings
        if mappings.count >= MIDIMapping.maximumCount,
           !mappings.contains(where: { $0.channel == mapping.channel && $0.controller == mapping.controller }) {
            throw ControlError("at most \(MIDIMapping.maximumCount) MIDI mappings are kept; unmap one first")
        }
    }

    /// Binds the mapping's channel and controller to its parameter, replacing what that pair drove.
    @discardableResult
    public func map(_ mapping: MIDIMapping) throws(ControlError) -> MIDIMapping {
        try checkMap(mapping)
        update { mappings in
            mappings.removeAll { $0.channel == mapping.channel && $0.controller == mapping.controller }
            mappings.append(mapping)
        }
        return mapping
    }

    /// Removes every mapping that drives `address`; returns them (empty: there was none).
    public func unmap(address: String) -> [MIDIMapping] {
        update { mappings in
            let removed = mappings.filter { $0.address == address }
            mappings.removeAll { $0.address == address }
            return removed
        }
    }

    /// Removes the mapping of a channel (1…16) and controller; returns it (nil: there was none).
    public func unmap(channel: Int, controller: Int) -> MIDIMapping? {
        update { mappings in
            let removed = mappings.first { $0.channel == channel && $0.controller == controller }
            mappings.removeAll { $0.channel == channel && $0.controller == controller }
            return removed
        }
    }

    private func update<T>(_ body: (inout [MIDIMapping]) -> T) -> T {
        let (result, mappings) = state.withLock { state in
            let result = body(&state.mappings)
            state.mappings.sort()
            return (result, state.mappings)
        }
        publishTable(mappings)
        keeper?.setMIDIMappings(mappings)
        return result
    }

    private func publishTable(_ mappings: [MIDIMapping]) {
        input.setTable(mappings.map { (channel: $0.channel, controller: $0.controller, parameterIndex: $0.parameterIndex) })
    }

    // MARK: Learn

    /// Waits for the next control change and maps it to `address` (checked by the caller with
    /// `MIDIMapping`'s rules); throws `LearnEnded` after `timeout`, on `cancelLearn()`, or when
    /// another learn replaces this one. `onArmed` runs once the learn is in progress (a cancel
    /// from then on finds it): where the caller says so to whoever asked.
    public func learn(_ address: String, timeout: Duration = defaultLearnTimeout,
                      onArmed: @Sendable () -> Void = {}) async throws -> MIDIMapping {
        let id = state.withLock { state in
            state.nextLearn += 1
            return state.nextLearn
        }
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.endLearn(id: id, reason: "no control change came within \(Int(timeout.seconds.rounded())) s")
        }
        return try await withCheckedThrowingContinuation { continuation in
            let replaced = state.withLock { state -> Learning? in
                defer { state.learning = Learning(id: id, address: address, continuation: continuation) }
                return state.learning
            }
            replaced?.continuation.resume(throwing: LearnEnded(description: "replaced by a learn for \(address)"))
            input.armLearn()
            onArmed()
        }
    }

    /// Ends the learn in progress; returns the address it was for (nil: none was).
    @discardableResult
    public func cancelLearn() -> String? {
        let address = state.withLock { $0.learning?.address }
        if address != nil { endLearn(id: nil, reason: "cancelled") }
        return address
    }

    /// The address a learn waits for, if one does.
    public var learningAddress: String? { state.withLock { $0.learning?.address } }

    /// Ends the learn `id` (nil: whichever is in progress) without a mapping.
    private func endLearn(id: Int?, reason: String) {
        let ended = state.withLock { state -> Learning? in
            guard let learning = state.learning, id == nil || learning.id == id else { return nil }
            state.learning = nil
            return learning
        }
        guard let ended else { return }
        input.disarmLearn()
        ended.continuation.resume(throwing: LearnEnded(description: "MIDI learn for \(ended.address) ended: \(reason)"))
    }

    private func learnt(channel: Int, controller: Int) {
        guard let learning = state.withLock({ state -> Learning? in
            defer { state.learning = nil }
            return state.learning
        }) else { return }
        do {
            let mapping = try map(MIDIMapping(address: learning.address, channel: channel, controller: controller))
            learning.continuation.resume(returning: mapping)
        } catch {
            learning.continuation.resume(throwing: error)
        }
    }

    // MARK: The stream

    /// Drains the ring every `pollInterval` while a port feeds the MIDI input, until cancelled.
    /// With nothing connected no event can come, so it waits for a connection instead of
    /// waking 200 times a second (one more drain after a disconnection takes what came before).
    public func run() async {
        var reportedDrops: UInt64 = 0
        while !Task.isCancelled {
            if !input.isSourceConnected {
                handle(input.takeEvents())
                await input.waitForSource()
            }
            try? await Task.sleep(for: MIDIControlInput.pollInterval)
            handle(input.takeEvents())
            let dropped = input.droppedEvents
            if dropped != reportedDrops {
                reportContinuation.yield(.dropped(count: dropped &- reportedDrops))
                reportedDrops = dropped
            }
        }
        reportContinuation.finish()
    }

    /// Handles one drain's events in order: the last value of each parameter is requested
    /// (together, one batch); learns map; program changes load factory patches.
    func handle(_ events: [MIDIControlEvent]) {
        guard !events.isEmpty else { return }
        var latest: [Int: Int] = [:]
        var order: [Int] = []
        for event in events {
            switch event {
            case .mapped(let index, let value):
                if latest.updateValue(value, forKey: index) == nil { order.append(index) }
            case .learn(let channel, let controller):
                learnt(channel: channel, controller: controller)
            case .programChange(let channel, let program):
                loadProgram(channel: channel, program: program)
            }
        }
        var changes: [(any ControlParameter, ParameterValue)] = []
        for index in order where ParameterModel.all.indices.contains(index) {
            let entry = ParameterModel.all[index]
            guard let control = runtime.parameter(at: entry.address), let value = latest[index] else { continue }
            changes.append((control, MIDIMapping.value(of: entry, controlValue: value)))
        }
        for (result, (control, _)) in zip(runtime.requestBatch(changes, origin: origin), changes) {
            if case .failure(let error) = result {
                refuse(control.descriptor.address, "\(error)")
            }
        }
    }

    /// Program change `program` (0-based, as sent) loads factory patch `program`.
    private func loadProgram(channel: Int, program: Int) {
        let what = "program change \(program) on channel \(channel)"
        guard let keeper else {
            refuse("/midi/program", "\(what): patches are not available (no state directory)")
            return
        }
        let factory = keeper.library.factoryPatches
        guard let patch = factory.first(where: { $0.number == program }) else {
            let range = factory.isEmpty ? "there are none" : "factory patches are 0…\(factory.count - 1)"
            refuse("/midi/program", "\(what): no factory patch \(program) (\(range))")
            return
        }
        Task {
            do {
                _ = try await keeper.loadPatch(.number(patch.number))
                reportContinuation.yield(.programLoaded(channel: channel, program: program, name: patch.name))
            } catch {
                refuse("/midi/program", "\(what): \(error)")
            }
        }
    }

    /// Reports a MIDI message that changed nothing, unless the same was reported within
    /// `refusalRepeatInterval`.
    private func refuse(_ address: String, _ reason: String) {
        let now = ContinuousClock.now
        let report = state.withLock { state -> Bool in
            let text = address + " " + reason
            if let last = state.lastRefusal, last.text == text, now - last.at < Self.refusalRepeatInterval { return false }
            state.lastRefusal = (text, now)
            return true
        }
        if report { reportContinuation.yield(.refused(address: address, reason: reason)) }
    }
}
