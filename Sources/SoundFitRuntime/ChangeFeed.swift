import Synchronization
import SoundFitModel
import SoundFitEngine
import SoundFitProcessing

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
typealias ChangeFeed = Subscribers<ControlChange>

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
