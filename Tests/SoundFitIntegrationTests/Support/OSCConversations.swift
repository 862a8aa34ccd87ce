import Foundation
import Glibc
import Testing

/// Request/reply helpers for the OSC command and subscription tests.
extension OSCTestClient {
    /// Sends `address arguments` and returns the first reply at `reply`, or the first `/error`
    /// (whichever comes first; callers check which). Messages received before it are consumed.
    func ask(_ address: String, _ arguments: [OSCValue] = [], reply: String,
             timeout: Duration = .seconds(10)) throws -> OSCTestMessage {
        sendRaw(OSCWire.encode(OSCTestMessage(address, arguments)))
        return try waitFor("\(reply) or /error for \(address) \(arguments)", timeout: timeout) {
            $0.address == reply || $0.address == "/error"
        }.match
    }

    /// Sends a set with a trailing request id; returns every `/state` carrying that id, up to
    /// and including its terminal one.
    func setWithID(_ address: String, _ value: OSCValue, id: Int32,
                   timeout: Duration = .seconds(15)) throws -> [OSCTestMessage] {
        send(address, value, .int(id))
        var reports: [OSCTestMessage] = []
        while true {
            let report = try waitFor("/state with request id \(id)", timeout: timeout) {
                $0.address == "/state" && $0.arguments.last == .int(id)
                    || ($0.address == "/error" && ($0.string(0) ?? "").hasPrefix(address))
            }.match
            reports.append(report)
            if report.address == "/error" || report.isTerminalState { return reports }
        }
    }

    /// The `/session` reply.
    func session() throws -> OSCTestMessage {
        try ask("/session", reply: "/session")
    }
}

extension OSCTestMessage {
    static let terminalStates: Set<String> = ["applied", "failed", "superseded"]

    /// A `/state` report with a terminal state.
    var isTerminalState: Bool { address == "/state" && Self.terminalStates.contains(string(1) ?? "") }

    /// The trailing int request id of a `/state` report (after the value and optional error).
    var requestID: Int32? {
        guard address == "/state", arguments.count >= 4, case .int(let id) = arguments[arguments.count - 1] else {
            return nil
        }
        return id
    }
}

/// Checks that `message` is `/error address …` with a non-empty message (containing `hint`,
/// case-insensitively, when given).
func expectErrorReply(_ message: OSCTestMessage, for address: String, hint: String? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(message.address == "/error" && message.string(0) == address,
            "expected /error \(address), got \(message)", sourceLocation: sourceLocation)
    let text = message.string(1) ?? ""
    #expect(!text.isEmpty, "\(message)", sourceLocation: sourceLocation)
    if let hint {
        #expect(text.localizedCaseInsensitiveContains(hint), "error for \(address) does not mention '\(hint)': \(message)",
                sourceLocation: sourceLocation)
    }
}

/// Approximate comparison of a numeric OSC value.
func isClose(_ value: OSCValue?, _ expected: Double, tolerance: Double) -> Bool {
    guard let number = value?.number else { return false }
    return abs(number - expected) <= tolerance
}

enum ProcessMemory {
    /// Resident set size of `pid` in kB (`VmRSS` in /proc/pid/status).
    static func residentKilobytes(_ pid: pid_t) throws -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw IntegrationError("no VmRSS for pid \(pid)") }
        return kilobytes
    }
}

enum ProcessScheduling {
    /// True when a thread of `pid` runs under SCHED_FIFO or SCHED_RR (field 41, `policy`, of
    /// /proc/pid/task/tid/stat): the JACK process thread of a client of a realtime server.
    static func hasRealtimeThread(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return false }
            // Fields after the command name start at field 3 (state); policy is field 41.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 38, let policy = Int(fields[38]) else { return false }
            return policy == Int(SCHED_FIFO) || policy == Int(SCHED_RR)
        }
    }
}

/// 127.0.0.x in host byte order.
func loopbackAddress(_ last: UInt8) -> UInt32 { 0x7F00_0000 | UInt32(last) }
