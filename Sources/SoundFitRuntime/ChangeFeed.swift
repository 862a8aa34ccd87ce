import Synchronization
import SoundFitEngine

/// Who asked for a change (an OSC client, a patch load…), so feedback can skip the requester.
public struct ControlOrigin: Hashable, Sendable, CustomStringConvertible {
    public let id: String
    public init(_ id: String) { self.id = id }
    public var description: String { id }
}

/// A parameter's applied value changed.
public struct ControlChange: Sendable, Equatable {
    public let address: String
    public let value: ParameterValue
    /// The requester, when the change came from a request that named one.
    public let origin: ControlOrigin?

    public init(address: String, value: ParameterValue, origin: ControlOrigin?) {
        self.address = address
        self.value = value
        self.origin = origin
    }
}

/// Fans out applied changes to every listener (OSC subscribers, persistence, the current patch).
final class ChangeFeed: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<ControlChange>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func subscribe() -> AsyncStream<ControlChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: ControlChange.self)
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.continuations[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ change: ControlChange) {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.yield(change) }
        }
    }
}

/// Remembers which origin made which request, until the request's change is published.
///
/// An entry is taken by the change the request made, or dropped when the request ends without
/// applying. A request applied without a change (the value was already current) leaves its entry
/// behind; the ledger keeps the newest `capacity` entries, so it stays bounded.
final class OriginLedger: Sendable {
    private struct Key: Hashable {
        var address: String
        var requestID: UInt64
    }

    private static let capacity = 1024
    private let entries = Mutex<[Key: ControlOrigin]>([:])

    func record(_ origin: ControlOrigin, address: String, requestID: UInt64) {
        entries.withLock { entries in
            if entries.count >= Self.capacity, let oldest = entries.keys.min(by: { $0.requestID < $1.requestID }) {
                entries[oldest] = nil
            }
            entries[Key(address: address, requestID: requestID)] = origin
        }
    }

    func take(address: String, requestID: UInt64) -> ControlOrigin? {
        entries.withLock { $0.removeValue(forKey: Key(address: address, requestID: requestID)) }
    }
}
