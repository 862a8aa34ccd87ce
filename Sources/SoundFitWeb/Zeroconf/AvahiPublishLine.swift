import Foundation

/// What one line of `avahi-publish -f -v` says (its standard error, in the C locale): the events
/// `ZeroconfAdvertiser` logs, one line each. Pure, for the tests.
public enum AvahiPublishLine: Equatable, Sendable {
    /// "Established under name 'X'": the record or service is on the network.
    case established(name: String)
    /// "Name collision, picking new name 'X'.": another host or service had the name; avahi
    /// registers the new one.
    case collision(newName: String)
    /// "Waiting for daemon ..." (no avahi-daemon yet) or "Disconnected, reconnecting ..." (it went
    /// away): `-f` keeps the publisher waiting for it.
    case daemonAbsent
    /// "Server version: avahi 0.8; Host name: vm.local": the machine's mDNS host name.
    case server(hostName: String)
    /// "Failed to …: reason" or "Client failure, exiting: reason": the publisher ends.
    case failed(reason: String)

    /// Nil for a line that tells nothing to log ("Host name conflict", blank lines).
    public init?(_ line: String) {
        let line = line.trimmingCharacters(in: .whitespaces)
        if let name = Self.quoted(line, after: "Established under name '") {
            self = .established(name: name)
        } else if let name = Self.quoted(line, after: "Name collision, picking new name '") {
            self = .collision(newName: name)
        } else if line.hasPrefix("Waiting for daemon") || line.hasPrefix("Disconnected, reconnecting") {
            self = .daemonAbsent
        } else if line.hasPrefix("Server version:"), let range = line.range(of: "; Host name: ") {
            self = .server(hostName: String(line[range.upperBound...]))
        } else if line.hasPrefix("Failed to ") || line.hasPrefix("Client failure") || line.hasPrefix("Bad number of arguments") {
            self = .failed(reason: line)
        } else {
            return nil
        }
    }

    /// The text between `prefix` and the last `'` of the line.
    private static func quoted(_ line: String, after prefix: String) -> String? {
        guard line.hasPrefix(prefix), let end = line.lastIndex(of: "'") else { return nil }
        let start = line.index(line.startIndex, offsetBy: prefix.count)
        return start <= end ? String(line[start..<end]) : nil
    }
}
