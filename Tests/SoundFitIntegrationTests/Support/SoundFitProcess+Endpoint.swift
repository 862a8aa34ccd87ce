import Foundation

extension SoundFitProcess {
    /// `soundfit ready osc=udp://HOST:PORT …` → (host, port), for any listening address
    /// (`ReadyLine` reads 127.0.0.1 only).
    func oscEndpoint(timeout: Duration = .seconds(30)) throws -> (host: String, port: UInt16) {
        let found = process.waitForOutput(timeout: timeout) { output -> (String, UInt16)? in
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("soundfit ready ") }),
                  let field = line.split(separator: " ").first(where: { $0.hasPrefix("osc=udp://") }) else { return nil }
            let endpoint = field.dropFirst("osc=udp://".count)
            guard let colon = endpoint.lastIndex(of: ":"), let port = UInt16(endpoint[endpoint.index(after: colon)...])
            else { return nil }
            return (String(endpoint[..<colon]), port)
        }
        guard let found else {
            throw IntegrationError("no ready line: \(process.standardOutput) \(process.standardError)")
        }
        return found
    }
}

extension OSCTestClient {
    /// The bytes `messages` took on the wire (SoundFit sends one message per datagram).
    static func wireBytes(_ messages: [OSCTestMessage]) -> Int {
        messages.reduce(0) { $0 + OSCWire.encode($1).count }
    }
}
