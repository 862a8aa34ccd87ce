/// One accepted value request and the states it goes through, from the processing model up to
/// the surfaces (one type all the way: a surface sees `ParameterRequest<ParameterValue>`).
///
/// Returned by a parameter's `request` (a session's `ProcessingParameter`, a `KernelParameter`). `states` yields this request's states only
/// (see `ParameterUpdateState`), ends with exactly one terminal state and then finishes;
/// surfaces report them to the requester.
public struct ParameterRequest<Value: Sendable>: Sendable {
    /// Unique per parameter, increasing in the order requests were accepted.
    public let id: UInt64
    /// The parameter's address in the parameter model (empty for a parameter outside it).
    public let address: String
    /// The requested value.
    public let value: Value
    /// This request's states, ending with its terminal state. Iterate it once (it is an
    /// `AsyncStream`: one consumer).
    public let states: AsyncStream<ParameterUpdateState<Value>>

    /// A request whose states another source reports (e.g. a request that must first fetch its
    /// value).
    public init(id: UInt64, address: String, value: Value, states: AsyncStream<ParameterUpdateState<Value>>) {
        self.id = id
        self.address = address
        self.value = value
        self.states = states
    }

    /// Waits for the terminal state, dropping the ones before it. Consumes `states`.
    ///
    /// Cancelling the waiting task stops the wait (not the request): it returns
    /// `failed(value, CancellationError())` then.
    public func terminalState() async -> ParameterUpdateState<Value> {
        for await state in states where state.isTerminal {
            return state
        }
        if Task.isCancelled { return .failed(value, CancellationError()) }
        // The parameter finished the stream without a terminal state: only when it was
        // deallocated with the request still waiting, which its own tasks prevent.
        return .failed(value, ProcessingParameterError.closed)
    }

    /// Waits for the terminal state: returns when applied, throws the error when failed and
    /// `ProcessingParameterError.superseded` when a newer value replaced this one. Consumes `states`.
    public func result() async throws {
        switch await terminalState() {
        case .applied: return
        case .failed(_, let error): throw error
        case .superseded: throw ProcessingParameterError.superseded
        case .pending, .applying: throw ProcessingParameterError.closed
        }
    }
}

/// A change of a parameter's value and the request that made it.
public struct ParameterChange<Value: Sendable>: Sendable {
    /// The parameter's address in the parameter model (empty for a parameter outside it).
    public let address: String
    /// The new value.
    public let value: Value
    /// The `ParameterRequest.id` of the request whose delivery set the value (0: none).
    public let requestID: UInt64
    /// The requester, when the request named one.
    public let origin: RequestOrigin?

    public init(address: String, value: Value, requestID: UInt64 = 0, origin: RequestOrigin? = nil) {
        self.address = address
        self.value = value
        self.requestID = requestID
        self.origin = origin
    }

    /// The same change with the value in another type (a surface's).
    public func map<Other: Sendable>(_ convert: (Value) -> Other) -> ParameterChange<Other> {
        ParameterChange<Other>(address: address, value: convert(value), requestID: requestID, origin: origin)
    }
}

extension ParameterChange: Equatable where Value: Equatable {}
