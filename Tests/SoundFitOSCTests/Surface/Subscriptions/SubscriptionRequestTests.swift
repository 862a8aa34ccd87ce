import OSCCore
import SoundFitOSC
import Testing

@Suite struct SubscriptionRequestTests {
    @Test func udpURLsParse() throws {
        #expect(try OSCPeer(oscURL: "osc.udp://127.0.0.1:9000") == OSCPeer(host: "127.0.0.1", port: 9000))
        #expect(try OSCPeer(oscURL: "osc.udp://192.168.1.20:57120/") == OSCPeer(host: "192.168.1.20", port: 57120))
        #expect(try OSCPeer(oscURL: "OSC.UDP://localhost:1") == OSCPeer(host: "127.0.0.1", port: 1))
        #expect(OSCPeer(host: "10.0.0.7", port: 8000)!.oscURL == "osc.udp://10.0.0.7:8000/")
        let peer = OSCPeer(host: "10.0.0.7", port: 8000)!
        #expect(try OSCPeer(oscURL: peer.oscURL) == peer)
    }

    @Test func otherURLsAreRejectedWithTheReason() {
        let cases: [(String, String)] = [
            ("osc.tcp://127.0.0.1:9000",
             "unsupported OSC URL scheme 'osc.tcp' in 'osc.tcp://127.0.0.1:9000': SoundFit sends over UDP only (osc.udp://host:port)"),
            ("osc.unix:///tmp/sock", "unsupported OSC URL scheme 'osc.unix' in 'osc.unix:///tmp/sock': SoundFit sends over UDP only (osc.udp://host:port)"),
            ("127.0.0.1:9000", "malformed OSC URL '127.0.0.1:9000': expected osc.udp://host:port"),
            ("osc.udp://127.0.0.1", "malformed OSC URL 'osc.udp://127.0.0.1': expected osc.udp://host:port"),
            ("osc.udp://:9000", "malformed OSC URL 'osc.udp://:9000': expected osc.udp://host:port"),
            ("osc.udp://127.0.0.1:0", "OSC URL 'osc.udp://127.0.0.1:0': port must be a number 1…65535"),
            ("osc.udp://127.0.0.1:65536", "OSC URL 'osc.udp://127.0.0.1:65536': port must be a number 1…65535"),
            ("osc.udp://127.0.0.1:+90", "OSC URL 'osc.udp://127.0.0.1:+90': port must be a number 1…65535"),
            ("osc.udp://mixer.local:9000", "OSC URL 'osc.udp://mixer.local:9000': host must be an IPv4 address or localhost"),
            ("osc.udp://256.1.1.1:9000", "OSC URL 'osc.udp://256.1.1.1:9000': host must be an IPv4 address or localhost"),
            ("osc.udp://[::1]:9000", "OSC URL 'osc.udp://[::1]:9000': IPv6 is not supported, use an IPv4 address"),
        ]
        for (url, message) in cases {
            #expect(throws: OSCURLError(message)) { try OSCPeer(oscURL: url) }
        }
    }

    @Test func subscribeArguments() throws {
        let url = OSCPeer(host: "127.0.0.1", port: 9000)!
        #expect(try SubscriptionRequest(subscribe: []) == SubscriptionRequest())
        #expect(try SubscriptionRequest(subscribe: [.string("osc.udp://127.0.0.1:9000")])
                == SubscriptionRequest(url: url, feedback: .native))
        #expect(try SubscriptionRequest(subscribe: [.symbol("normalized")]) == SubscriptionRequest(feedback: .normalized))
        #expect(try SubscriptionRequest(subscribe: [.string("osc.udp://127.0.0.1:9000"), .string("both")])
                == SubscriptionRequest(url: url, feedback: .both))
    }

    /// `/subscribe ss "" normalized`: an empty URL is the sender itself (no confirmation), so a
    /// client can choose the feedback form without naming its own address.
    @Test func anEmptyURLIsTheSender() throws {
        #expect(try SubscriptionRequest(subscribe: [.string(""), .string("normalized")])
                == SubscriptionRequest(url: nil, feedback: .normalized))
        #expect(try SubscriptionRequest(subscribe: [.string("/filter"), .string("")]).url == nil)
        #expect(try SubscriptionRequest(unsubscribe: [.string("")]) == SubscriptionRequest())
        #expect(throws: SubscriptionError.wrongArguments(address: "/subscribe", typeTags: "ss")) {
            try SubscriptionRequest(subscribe: [.string(""), .string("osc.udp://127.0.0.1:9000")])
        }
    }

    @Test func badSubscribeArguments() throws {
        #expect(throws: SubscriptionError.wrongArguments(address: "/subscribe", typeTags: "i")) {
            try SubscriptionRequest(subscribe: [.int32(9000)])
        }
        // The arguments may come in any order, each at most once.
        #expect(try SubscriptionRequest(subscribe: [.string("both"), .string("osc.udp://127.0.0.1:9000")]).feedback == .both)
        #expect(throws: SubscriptionError.wrongArguments(address: "/subscribe", typeTags: "ss")) {
            try SubscriptionRequest(subscribe: [.string("both"), .string("native")])
        }
        #expect(throws: SubscriptionError.wrongArguments(address: "/subscribe", typeTags: "sss")) {
            try SubscriptionRequest(subscribe: [.string("osc.udp://127.0.0.1:9000"), .string("both"), .string("x")])
        }
        #expect(throws: SubscriptionError.unknownFeedbackForm("faders")) {
            try SubscriptionRequest(subscribe: [.string("faders")])
        }
        #expect(throws: SubscriptionError.invalidURL(OSCURLError(
            "unsupported OSC URL scheme 'osc.tcp' in 'osc.tcp://1.2.3.4:5': SoundFit sends over UDP only (osc.udp://host:port)"))) {
            try SubscriptionRequest(subscribe: [.string("osc.tcp://1.2.3.4:5")])
        }
        #expect(SubscriptionError.wrongArguments(address: "/subscribe", typeTags: "i").description
                == "/subscribe takes [,s url] [,s native|normalized|both] [,s address_pattern], each at most once, got ,i")
        #expect(SubscriptionError.unknownFeedbackForm("faders").description
                == "/subscribe: unknown feedback form 'faders'; expected native, normalized or both")
    }

    @Test func unsubscribeArguments() throws {
        #expect(try SubscriptionRequest(unsubscribe: []).url == nil)
        #expect(try SubscriptionRequest(unsubscribe: [.string("osc.udp://127.0.0.1:9000/")]).url
                == OSCPeer(host: "127.0.0.1", port: 9000))
        #expect(throws: SubscriptionError.wrongArguments(address: "/unsubscribe", typeTags: "ss")) {
            try SubscriptionRequest(unsubscribe: [.string("osc.udp://127.0.0.1:9000"), .string("both")])
        }
        #expect(SubscriptionError.wrongArguments(address: "/unsubscribe", typeTags: "f").description
                == "/unsubscribe takes [,s url], got ,f")
    }
}
