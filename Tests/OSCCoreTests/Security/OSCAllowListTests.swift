import OSCCore
import Testing

@Suite struct OSCAllowListTests {
    private func peer(_ host: String) -> OSCPeer { OSCPeer(host: host, port: 5000)! }

    @Test func addressesAndPrefixes() throws {
        let list = try OSCAllowList(parsing: "127.0.0.1, 192.168.1.0/24,10.0.0.0/8")
        #expect(list.description == "127.0.0.1,192.168.1.0/24,10.0.0.0/8")
        #expect(list.prefixes == [OSCAllowList.Prefix(network: 0x7F00_0001, prefixLength: 32),
                                  OSCAllowList.Prefix(network: 0xC0A8_0100, prefixLength: 24),
                                  OSCAllowList.Prefix(network: 0x0A00_0000, prefixLength: 8)])
        for allowed in ["127.0.0.1", "192.168.1.0", "192.168.1.255", "10.0.0.1", "10.255.255.255"] {
            #expect(list.allows(peer(allowed)), "\(allowed)")
        }
        for refused in ["127.0.0.2", "192.168.2.1", "192.168.0.255", "11.0.0.1", "9.255.255.255", "0.0.0.0"] {
            #expect(!list.allows(peer(refused)), "\(refused)")
        }
    }

    @Test func edgesOfThePrefixLength() throws {
        let everyone = try OSCAllowList(parsing: "0.0.0.0/0")
        #expect(everyone.allows(peer("203.0.113.5")))
        let localhost = try OSCAllowList(parsing: "localhost")
        #expect(localhost.allows(peer("127.0.0.1")))
        #expect(!localhost.allows(peer("127.0.0.2")))
        let pair = try OSCAllowList(parsing: "172.16.0.6/31")
        #expect(pair.allows(peer("172.16.0.6")) && pair.allows(peer("172.16.0.7")) && !pair.allows(peer("172.16.0.8")))
    }

    @Test func noOptionAllowsEveryone() {
        #expect(OSCAllowList.everyone.allowsEveryone)
        #expect(OSCAllowList.everyone.allows(peer("8.8.8.8")))
        #expect(OSCAllowList.everyone.description == "every sender")
    }

    @Test func clearErrors() {
        let cases: [(String, String)] = [
            ("", "--osc-allow: no addresses given (leave the option out to allow every sender)"),
            ("127.0.0.1,,10.0.0.1", "--osc-allow: empty entry in '127.0.0.1,,10.0.0.1'"),
            ("127.0.0.1,", "--osc-allow: empty entry in '127.0.0.1,'"),
            ("192.168.1", "--osc-allow: '192.168.1' is not an IPv4 address or prefix (expected a.b.c.d or a.b.c.d/n)"),
            ("192.168.1.256", "--osc-allow: '192.168.1.256' is not an IPv4 address or prefix (expected a.b.c.d or a.b.c.d/n)"),
            ("mixer.local", "--osc-allow: 'mixer.local' is not an IPv4 address or prefix (expected a.b.c.d or a.b.c.d/n)"),
            ("10.0.0.0/33", "--osc-allow: '10.0.0.0/33': prefix length must be 0…32"),
            ("10.0.0.0/", "--osc-allow: '10.0.0.0/': prefix length must be 0…32"),
            ("10.0.0.0/-8", "--osc-allow: '10.0.0.0/-8': prefix length must be 0…32"),
            ("192.168.1.5/24", "--osc-allow: '192.168.1.5/24' has host bits set; did you mean 192.168.1.0/24?"),
            ("::1", "--osc-allow: '::1': IPv6 is not supported (SoundFit listens on IPv4)"),
        ]
        for (text, message) in cases {
            #expect(throws: OSCAllowList.ParseError.self) { try OSCAllowList(parsing: text) }
            do {
                _ = try OSCAllowList(parsing: text)
            } catch {
                #expect(error.description == message)
            }
        }
    }
}
