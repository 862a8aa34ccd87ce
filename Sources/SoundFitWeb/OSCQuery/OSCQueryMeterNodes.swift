import OSCCore
import SoundFitJSON
import SoundFitOSC
import Synchronization

/// The meter messages as read-only OSCQuery nodes: `/meters/input` and `/meters/output`
/// (`TYPE` `ff` per channel: peak and RMS in dBFS, channel after channel) and `/meters/reduction`
/// (`TYPE` `i`: the channel; the band reductions in dB follow as floats, as many as the tech
/// level has bands, none while the personalization is bypassed, so OSCQuery's fixed TYPE cannot
/// name them). `ACCESS` 1, no `VALUE` (a meter is a stream, not a value). A WebSocket that
/// `LISTEN`s to one gets its messages as binary OSC at `OSCControlSurface.followedMeterRate`
/// until `IGNORE` or the socket closes (the surface's meter stream, within its limits).
///
/// The nodes exist once the OSC surface is attached (`WebServer.attach`), before the ready line.
///
/// Thread rules: any thread except the JACK process callback.
final class OSCQueryMeterNodes: Sendable {
    private struct Attached: Sendable {
        let surface: OSCControlSurface
        let channelCount: Int
    }

    private let attached = Mutex<Attached?>(nil)

    /// The meter node paths while the surface is attached, in stream order.
    var paths: [String] {
        attached.withLock { $0 } == nil ? [] : ["/meters/input", "/meters/output", "/meters/reduction"]
    }

    func attach(_ surface: OSCControlSurface, channelCount: Int) {
        attached.withLock { $0 = Attached(surface: surface, channelCount: channelCount) }
    }

    /// Whether `path` is a meter node one can LISTEN to.
    func isMeter(_ path: String) -> Bool { !paths.isEmpty && OSCControlSurface.meterAddresses.contains(path) }

    /// The node at `path`, nil when it is not a meter node.
    func node(at path: String) -> JSONObject? {
        guard isMeter(path), let attached = attached.withLock({ $0 }) else { return nil }
        var node = JSONObject()
        node.append("FULL_PATH", .string(path))
        node.append("TYPE", .string(path == "/meters/reduction" ? "i" : String(repeating: "ff", count: attached.channelCount)))
        node.append("ACCESS", .number(1))
        node.append("DESCRIPTION", OSCCommandDescription.all.first { $0.address == "/meters/input" }.map { .string($0.summary) })
        return node
    }

    /// LISTEN: streams `path` to `sender`. Returns nil, or why not (the surface's stream limits).
    func follow(_ path: String, for sender: OSCSender) -> String? {
        guard let attached = attached.withLock({ $0 }) else { return "SoundFit is starting: the meters are not ready" }
        do {
            try attached.surface.followMeters(path, for: sender)
            return nil
        } catch {
            return error.description
        }
    }

    /// IGNORE.
    func unfollow(_ path: String, for sender: OSCSender) {
        attached.withLock { $0 }?.surface.unfollowMeters(path, for: sender)
    }
}
