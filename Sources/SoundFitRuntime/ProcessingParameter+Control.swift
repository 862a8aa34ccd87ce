import SoundFitModel
import SoundFitEngine
import SoundFitProcessing

extension ProcessingParameter {
    /// Requests `value` and maps its states to the control vocabulary with `convert`; records
    /// `origin` in `ledger` for the change the request makes.
    func controlRequest(_ value: Value, address: String, origin: ControlOrigin?, ledger: OriginLedger,
                        convert: @escaping @Sendable (Value) -> ParameterValue) throws -> ControlRequest {
        let request = try request(value)
        if let origin { ledger.record(origin, address: address, requestID: request.id) }
        let states = AsyncStream<ControlState> { continuation in
            let task = Task {
                for await state in request.states {
                    // An applied request's entry is taken by its change; others end here.
                    if state.isTerminal && state.name != "applied" {
                        _ = ledger.take(address: address, requestID: request.id)
                    }
                    continuation.yield(ControlState(state, convert: convert))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return ControlRequest(address: address, value: convert(value), states: states)
    }
}

extension ControlState {
    init<Value>(_ state: ParameterUpdateState<Value>, convert: (Value) -> ParameterValue) {
        let name: Name
        switch state {
        case .pending: name = .pending
        case .applying: name = .applying
        case .applied: name = .applied
        case .failed: name = .failed
        case .superseded: name = .superseded
        }
        self.init(name: name, value: convert(state.value), error: state.error.map { "\($0)" })
    }
}

extension ProcessingParameter {
    /// Publishes every change of this parameter to `feed`, with the requester's origin, until
    /// the parameter goes away.
    func publishChanges(address: String, to feed: ChangeFeed, ledger: OriginLedger,
                        convert: @escaping @Sendable (Value) -> ParameterValue) {
        let changes = changeUpdates()
        Task {
            for await change in changes {
                feed.yield(ControlChange(address: address, value: convert(change.value),
                                         origin: ledger.take(address: address, requestID: change.requestID)))
            }
        }
    }
}
