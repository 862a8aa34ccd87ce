import SoundFitEngine
import SoundFitProcessing

extension ProcessingParameter {
    /// Requests `value` and maps its states to the control vocabulary with `convert`.
    func controlRequest(_ value: Value, address: String, convert: @escaping @Sendable (Value) -> ParameterValue)
        throws -> ControlRequest
    {
        let request = try request(value)
        let states = AsyncStream<ControlState> { continuation in
            let task = Task {
                for await state in request.states {
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
