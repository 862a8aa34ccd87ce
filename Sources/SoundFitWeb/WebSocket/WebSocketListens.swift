import OSCCore
import SoundFitOSC
import Synchronization

/// Which parameter each WebSocket follows (OSCQuery `LISTEN`). Bounded by the namespace: only
/// parameter paths can be listened to, each once per connection.
///
/// Thread rules: any thread except the JACK process callback.
final class WebSocketListens: Sendable {
    private let paths = Mutex<[OSCPeer: Set<String>]>([:])

    /// Follows `path` for `peer`.
    func listen(_ peer: OSCPeer, to path: String) {
        paths.withLock { _ = $0[peer, default: []].insert(path) }
    }

    /// Stops following `path` for `peer`; false when it was not followed.
    @discardableResult
    func ignore(_ peer: OSCPeer, _ path: String) -> Bool {
        paths.withLock { $0[peer]?.remove(path) != nil }
    }

    /// The connection closed.
    func remove(_ peer: OSCPeer) {
        paths.withLock { $0[peer] = nil }
    }

    /// The connections following `path`.
    func listeners(of path: String) -> [OSCPeer] {
        paths.withLock { all in all.compactMap { $0.value.contains(path) ? $0.key : nil } }
    }
}
