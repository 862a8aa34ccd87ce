import Foundation
import SoundFit
import Testing

/// The parsing behind `WebAccess` (Host and Origin values, the token) and the ready line that
/// carries the token; the checks themselves are tested against the real binary
/// (`SoundFitIntegration.WebAccessTests`).
@Suite struct WebAccessParsingTests {
    @Test func hostNamesLoseTheirPortBracketsAndCase() {
        #expect(WebAccess.hostName(ofHost: "Example.COM:7701") == "example.com")
        #expect(WebAccess.hostName(ofHost: "127.0.0.1") == "127.0.0.1")
        #expect(WebAccess.hostName(ofHost: "[::1]:7701") == "::1")
        #expect(WebAccess.hostName(ofHost: "[::1]") == "::1")
        for malformed in ["", ":7701", "a/b", "x:", "x:y", "a:1:2", "[::1", "[::1]x", "evil example", "a@b"] {
            #expect(WebAccess.hostName(ofHost: malformed) == nil, "\(malformed)")
        }
    }

    @Test func originsAreNormalized() {
        #expect(WebAccess.normalizedOrigin("HTTP://Studio.LAN:8080/") == "http://studio.lan:8080")
        #expect(WebAccess.normalizedOrigin("https://a.example") == "https://a.example")
        for malformed in ["null", "evil.example", "://x", "http://", "http://a/b"] {
            #expect(WebAccess.normalizedOrigin(malformed) == nil, "\(malformed)")
        }
    }

    @Test func tokensAreRandom128BitHex() {
        let tokens = (0..<100).map { _ in WebAccess.randomToken() }
        #expect(Set(tokens).count == 100)
        #expect(tokens.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test func theReadyLineCarriesTheToken() throws {
        let peer = try #require(OSCPeer(host: "0.0.0.0", port: 7700))
        let web = try #require(OSCPeer(host: "0.0.0.0", port: 7701))
        var ready = SoundFitReady(osc: peer, http: web, clientName: "soundfit", serverName: "default", channelCount: 2)
        ready.httpToken = "0123abcd"
        #expect(ready.line.contains(" http=http://0.0.0.0:7701/?token=0123abcd client=soundfit "), "\(ready.line)")
    }
}
