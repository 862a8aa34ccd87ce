import Foundation
import Glibc
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// A bounded, seeded fuzzing run of the HTTP parser and the WebSocket framing of
    /// the real binary, beside the OSC one (`DispatcherFuzzTests`, `OSCCodecFuzzTests`): random
    /// bytes and mutations of valid requests, handshakes and frames, one connection each. The
    /// server survives, answers a normal request afterwards, changes nothing the inputs could not
    /// reach, and keeps its memory bound.
    @Suite("Web fuzzing") struct WebFuzzTests {
        static let seed: UInt64 = 0x5F17_2021
        static let inputs = 3000
        static let timeBudget: Duration = .seconds(90)

        /// Valid inputs the mutations start from: requests (plain, pipelined, with bodies), and a
        /// handshake followed by frames (read-only OSC, LISTEN, ping, close).
        static func corpus(port: UInt16) -> [[UInt8]] {
            let host = "127.0.0.1:\(port)"
            let handshake = RawHTTPConnection.request("/", host: host, headers: RawHTTPConnection.upgradeHeaders)
            let ping = OSCWire.encode(OSCTestMessage("/ping"))
            let listen = Array(#"{"COMMAND":"LISTEN","DATA":"/filter/cutoff"}"#.utf8)
            return [
                RawHTTPConnection.request("/", host: host),
                RawHTTPConnection.request("/filter/cutoff?VALUE", host: host, headers: [("Connection", "keep-alive")]),
                RawHTTPConnection.request("/?HOST_INFO", host: host) + RawHTTPConnection.request("/response?points=64", host: host),
                RawHTTPConnection.request("HEAD", "/ui/", host: host),
                RawHTTPConnection.request("POST", "/ui/x", host: host, headers: [("Transfer-Encoding", "chunked")]) + Array("5\r\nhello\r\n0\r\n\r\n".utf8),
                RawHTTPConnection.request("OPTIONS", "*", host: host, body: Array("x".utf8)),
                handshake + RawHTTPConnection.frame(opcode: 2, payload: ping),
                handshake + RawHTTPConnection.frame(opcode: 1, payload: listen) + RawHTTPConnection.frame(opcode: 9, payload: [1, 2]),
                handshake + RawHTTPConnection.frame(opcode: 2, payload: Array(ping.prefix(4)), fin: false)
                    + RawHTTPConnection.frame(opcode: 0, payload: Array(ping.dropFirst(4))),
                handshake + RawHTTPConnection.frame(opcode: 8, payload: [0x03, 0xE8]),
            ]
        }

        /// A random input: pure noise, or a corpus entry with a few byte flips, insertions,
        /// deletions, splices and repetitions.
        static func input(_ corpus: [[UInt8]], _ random: inout SeededRandom) -> [UInt8] {
            if Int.random(in: 0..<8, using: &random) == 0 {
                return (0..<Int.random(in: 1...2048, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            var bytes = corpus[Int.random(in: 0..<corpus.count, using: &random)]
            for _ in 0..<Int.random(in: 1...6, using: &random) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<6, using: &random) {
                case 0: bytes[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                case 1: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 2: bytes.insert(contentsOf: [UInt8](repeating: bytes[at], count: Int.random(in: 1...300, using: &random)), at: at)
                case 3: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
                case 4: bytes.insert(contentsOf: Array(":\r\n \t%\u{0}".utf8).shuffled(using: &random), at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            return bytes
        }

        @Test("3 000 seeded random and mutated HTTP requests, handshakes and frames: the server survives, answers, changes nothing, memory < 32 MB more")
        func fuzzHTTPAndWebSocket() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try #require(rig.ready.httpPort)
                let pid = rig.soundfit.process.pid
                _ = try PlainHTTP.get(port: port, "/")
                let gain = try rig.osc.query("/output/gain").number
                let before = try ProcessMemory.residentKilobytes(pid)
                var random = SeededRandom(seed: Self.seed)
                let corpus = Self.corpus(port: port)
                let start = ContinuousClock.now
                var sent = 0, answered = 0, closed = 0
                while sent < Self.inputs, ContinuousClock.now - start < Self.timeBudget {
                    let bytes = Self.input(corpus, &random)
                    let connection = try RawHTTPConnection(port: port, sendTimeoutSeconds: 2)
                    connection.send(bytes)
                    sent += 1
                    // Whatever comes back within a moment (an answer, a close); unfinished inputs wait
                    // for the request deadline, which the client does not wait out: it closes.
                    connection.receive(timeout: .milliseconds(40)) { RawHTTPConnection.response(in: $0) != nil }
                    if !connection.received.isEmpty { answered += 1 }
                    if connection.closedByServer { closed += 1 }
                }
                let elapsed = ContinuousClock.now - start
                try rig.osc.ping()
                #expect(rig.soundfit.process.isRunning)
                let info = try PlainHTTP.getJSON(port: port, "/?HOST_INFO")
                #expect(info.status == 200 && info.object["OSC_PORT"] != nil, "\(info)")
                let after = try ProcessMemory.residentKilobytes(pid)
                report("web fuzz inputs sent (seed \(Self.seed))", Double(sent), unit: "inputs")
                report("web fuzz inputs answered within 40 ms", Double(answered), unit: "inputs")
                report("web fuzz run time", Double(elapsed.components.seconds), unit: "s")
                report("web fuzz RSS growth", Double(after - before) / 1024, unit: "MiB")
                #expect(sent >= 500, "only \(sent) inputs in \(Self.timeBudget)")
                #expect(answered > sent / 2, "\(answered) of \(sent) inputs got an answer")
                #expect(after - before < 32 * 1024, "RSS grew \(after - before) kB")
                #expect(try rig.osc.query("/output/gain").number == gain)
                #expect(!rig.soundfit.process.standardError.contains("Fatal error"), "\(rig.soundfit.process.standardError.suffix(2000))")
            }
        }
    }
}
