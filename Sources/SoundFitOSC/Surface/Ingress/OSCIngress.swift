import Logging
import OSCCore

/// The gate every received packet passes before anything answers it: packets from SoundFit's
/// own endpoint and from senders outside `--osc-allow` are dropped, oversized ones too, and
/// the rest decoded. Drops are logged, rate limited (a sender can cause them at any rate).
///
/// Thread rules: `admit` runs on a transport's receive thread; `flushSuppressedLogLines` on
/// any thread except the JACK process callback.
struct OSCIngress: Sendable {
    /// What became of one packet.
    enum Admission {
        case packet(OSCPacket)
        /// Dropped without an answer (already logged).
        case dropped
        /// Not valid OSC: answered with `/error ,s "" ,s reason`.
        case undecodable(reason: String)
    }

    let allowList: OSCAllowList
    let logger: Logger
    /// Refused senders and oversized packets are logged at most a few times per interval.
    let refusals: RateLimitedLog<String>
    /// Undecodable packets are logged at most a few times per interval, from all senders
    /// together (forged sources are free to vary): one
    /// client sending garbage made 557 700 lines (72.5 MB) in 10 s when each had its line.
    let undecodable: RateLimitedLog<String>

    init(allowList: OSCAllowList, logger: Logger) {
        self.allowList = allowList
        self.logger = logger
        refusals = RateLimitedLog { [logger] line in logger.warning("\(line)") }
        undecodable = RateLimitedLog { [logger] line in logger.info("\(line)") }
    }

    /// Checks and decodes one packet from `sender`.
    func admit(_ bytes: [UInt8], from sender: OSCSender) -> Admission {
        let peer = sender.peer
        // A packet from this very endpoint is one of SoundFit's own replies (or a forgery of one):
        // answering it would start an exchange with itself that never ends.
        guard !sender.transport.isOwnEndpoint(peer) else {
            refusals.log("own socket", "dropped an OSC packet whose source is SoundFit's own port \(peer)")
            return .dropped
        }
        guard allowList.allows(peer) else {
            refusals.log("refused \(peer.host)", "ignored OSC from \(peer): not in --osc-allow \(allowList)")
            return .dropped
        }
        do {
            return .packet(try OSCCodec.decode(bytes))
        } catch {
            undecodable.log("undecodable", "undecodable OSC packet from \(peer): \(error)")
            return .undecodable(reason: error.description)
        }
    }

    /// Logs an oversized packet that the transport dropped.
    func oversized(_ size: Int, from peer: OSCPeer, limit: Int) {
        refusals.log("oversized", "dropped a \(size)-byte OSC packet from \(peer) (limit \(limit))")
    }

    /// Writes the counts of drops held back in rate-limit windows that have ended, so a flood
    /// that stopped is still accounted for in the log.
    func flushSuppressedLogLines() {
        refusals.flushSuppressed()
        undecodable.flushSuppressed()
    }
}
