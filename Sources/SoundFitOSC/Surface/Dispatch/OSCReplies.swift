import Logging
import OSCCore

/// Sends answers back to a request's sender, over the transport the request came from.
///
/// Thread rules: any thread except the JACK process callback.
struct OSCReplies: Sendable {
    let logger: Logger

    func send(_ message: OSCMessage, to sender: OSCSender) {
        if !sender.send(message) {
            logger.debug("could not send \(message.address) to \(sender)")
        }
    }

    /// `/error ,s address ,s reason`: the request was rejected and changed nothing.
    func reject(_ address: String, _ reason: String, to sender: OSCSender) {
        logger.debug("rejected \(address) from \(sender): \(reason)")
        send(OSCMessage("/error", [.string(address), .string(reason)]), to: sender)
    }
}
