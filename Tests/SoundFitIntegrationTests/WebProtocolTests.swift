import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// RFC 6455 failures close the WebSocket with 1002 and nothing
    /// is processed; the request deadline answers `408`; answers queued for a client that does
    /// not read are bounded (memory measured in /proc). Raw TCP against the real binary.
    @Suite("Web protocol: RFC 6455, 408, queued answers") struct WebProtocolTests {
        /// A WebSocket opened on `port` (no Origin: a non-browser client on loopback).
        static func webSocket(_ port: UInt16) throws -> RawHTTPConnection {
            let opened = try WebAccessTests.upgrade(port, host: "127.0.0.1:\(port)")
            guard opened.status == 101 else { throw IntegrationError("WebSocket handshake answered \(opened.status) \(opened.body)") }
            return opened.connection
        }

        @Test("An unmasked client frame and a frame with an RSV bit close the WebSocket with 1002; the OSC they carry is not processed")
        func framesBreakingRFC6455() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort)
            // The same message, masked and without RSV, is processed: the control for what follows.
            let valid = try Self.webSocket(port)
            valid.send(RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-6)))
            #expect(try WebAccessTests.waitForGain(rig.osc, -6))

            let cases: [(String, [UInt8])] = [
                ("unmasked binary", RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-12), mask: nil)),
                ("unmasked text", RawHTTPConnection.frame(opcode: 1, payload: Array(#"{"COMMAND":"LISTEN","DATA":"/output/gain"}"#.utf8),
                                                          mask: nil)),
                ("RSV1 binary", RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-12), rsv: 4)),
                ("RSV2 binary", RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-12), rsv: 2)),
                ("RSV3 binary", RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-12), rsv: 1)),
                ("unmasked ping", RawHTTPConnection.frame(opcode: 9, payload: [], mask: nil)),
            ]
            for (name, frame) in cases {
                let socket = try Self.webSocket(port)
                // A valid frame after the bad one must not be processed either.
                socket.send(frame + RawHTTPConnection.frame(opcode: 2, payload: WebAccessTests.gainPacket(-18)))
                let frames = socket.readFrames(until: 0x8)
                let close = frames.first { $0.opcode == 0x8 }
                let code = close.map { $0.payload.count >= 2 ? Int($0.payload[0]) << 8 | Int($0.payload[1]) : 0 }
                #expect(code == 1002, "\(name): close \(String(describing: code)), frames \(frames.map(\.opcode))")
                #expect(!frames.contains { $0.opcode == 0xA }, "\(name): answered with a pong")
                #expect(socket.waitForClose(timeout: .seconds(5)), "\(name): the connection stayed open")
                #expect(try rig.osc.query("/output/gain").number == -6, "\(name) was processed")
            }
            #expect(rig.soundfit.process.standardError.contains("RFC 6455"), "no log line")
        }

        @Test("The request deadline answers 408 Request Timeout (JSON reason) before closing: an idle connection and a half-sent request")
        func requestTimeout() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try #require(rig.ready.httpPort)
                let idle = try RawHTTPConnection(port: port)
                let partial = try RawHTTPConnection(port: port)
                partial.send("GET /?HOST_INFO HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                let afterAnswer = try RawHTTPConnection(port: port)
                afterAnswer.send(RawHTTPConnection.request("/?HOST_INFO", host: "127.0.0.1"))
                #expect(afterAnswer.readResponse()?.status == 200)
                let start = ContinuousClock.now
                for (name, connection) in [("idle", idle), ("half-sent", partial), ("after an answer", afterAnswer)] {
                    let response = connection.readResponse(timeout: .seconds(20))
                    #expect(response?.status == 408, "\(name): \(String(describing: response?.status)), \(connection.received.count) bytes")
                    let body = response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
                    #expect(body.contains("\"error\"") && body.contains("10"), "\(name): \(body)")
                    #expect(response?.headers["connection"] == "close", "\(name): \(String(describing: response?.headers))")
                    #expect(connection.waitForClose(timeout: .seconds(5)), "\(name): not closed after the 408")
                }
                let elapsed = ContinuousClock.now - start
                report("408 of three connections after", Double(elapsed.components.seconds), unit: "s")
                #expect(elapsed < .seconds(15))
                try rig.osc.ping()
            }
        }

        @Test("A client pipelining GET / without reading: SoundFit's memory grows < 32 MB, the connection is closed, others are answered")
        func pipeliningWithoutReading() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try #require(rig.ready.httpPort)
                let pid = rig.soundfit.process.pid
                _ = try PlainHTTP.get(port: port, "/")  // the namespace's first answer, built before measuring
                let before = try ProcessMemory.residentKilobytes(pid)
                let greedy = try RawHTTPConnection(port: port, receiveBufferBytes: 4096, sendTimeoutSeconds: 1)
                let request = RawHTTPConnection.request("/", host: "127.0.0.1:\(port)")
                let batch = Array([[UInt8]](repeating: request, count: 100).joined())
                var sent = 0, peak = before
                let start = ContinuousClock.now
                // Keeps sending, never reading, for 15 s or until the server closes the connection. A
                // send that times out (the server holds its reads: the buffers are full) is tried
                // again, and the memory sampled meanwhile.
                var closed = false
                while ContinuousClock.now - start < .seconds(15) {
                    if greedy.send(batch) {
                        sent += 100
                    } else if greedy.sendFoundClosed {
                        closed = true
                        break
                    }
                    peak = max(peak, try ProcessMemory.residentKilobytes(pid))
                }
                peak = max(peak, try ProcessMemory.residentKilobytes(pid))
                let held = ContinuousClock.now - start
                // Reading now takes what the kernel still holds, then the end the server made.
                closed = greedy.waitForClose(timeout: .seconds(15)) || closed
                let after = try ProcessMemory.residentKilobytes(pid)
                report("pipelined GET / requests sent before the server stopped taking them", Double(sent), unit: "requests")
                report("time until the server closed the pipelining client", Double(held.components.seconds), unit: "s")
                report("SoundFit RSS growth, pipelining client (peak)", Double(peak - before) / 1024, unit: "MiB")
                report("SoundFit RSS growth, after the client", Double(after - before) / 1024, unit: "MiB")
                #expect(closed, "the connection of a client that does not read stayed open")
                #expect(peak - before < 32 * 1024, "RSS grew \(peak - before) kB")
                #expect(after - before < 32 * 1024, "RSS grew \(after - before) kB")
                #expect(try PlainHTTP.get(port: port, "/?HOST_INFO").status == 200)
                // The log line is written as the connection closes, not before: wait for it.
                let logged = rig.soundfit.process.waitForOutput(timeout: .seconds(10), fromStandardError: true) {
                    $0.contains("does not read") ? true : nil
                }
                #expect(logged == true, "no log line")
            }
        }
    }
}
