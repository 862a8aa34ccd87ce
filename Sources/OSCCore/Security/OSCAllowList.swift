/// Which senders' packets may take effect (`--osc-allow`): IPv4 addresses and CIDR prefixes.
/// Empty (no option given) allows every sender; the socket listens on 127.0.0.1 by default, so
/// only local processes can reach it unless `--osc-host` widens that.
///
/// A pure value type; `allows` is a few integer compares, callable from any thread.
public struct OSCAllowList: Sendable, Equatable, CustomStringConvertible {
    /// An IPv4 prefix: the `prefixLength` leading bits of `network` (host byte order).
    public struct Prefix: Sendable, Equatable, CustomStringConvertible {
        public let network: UInt32
        public let prefixLength: Int

        /// `network` must have no bits set beyond the prefix; `prefixLength` is 0…32.
        public init(network: UInt32, prefixLength: Int) {
            precondition((0...32).contains(prefixLength) && network & ~Self.mask(prefixLength) == 0)
            self.network = network
            self.prefixLength = prefixLength
        }

        /// Parses `a.b.c.d`, `a.b.c.d/n` or `localhost`.
        public init(parsing text: String) throws(ParseError) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let addressText = parts[0] == "localhost" ? "127.0.0.1" : String(parts[0])
            if addressText.contains(":") {
                throw ParseError("'\(text)': IPv6 is not supported (SoundFit listens on IPv4)")
            }
            guard let address = Self.parseIPv4(addressText) else {
                throw ParseError("'\(text)' is not an IPv4 address or prefix (expected a.b.c.d or a.b.c.d/n)")
            }
            var length = 32
            if parts.count == 2 {
                guard !parts[1].isEmpty, parts[1].count <= 2, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                      let parsed = Int(parts[1]), (0...32).contains(parsed) else {
                    throw ParseError("'\(text)': prefix length must be 0…32")
                }
                length = parsed
            }
            let mask = Self.mask(length)
            guard address & ~mask == 0 else {
                let network = Self.dotted(address & mask)
                throw ParseError("'\(text)' has host bits set; did you mean \(network)/\(length)?")
            }
            self.init(network: address, prefixLength: length)
        }

        /// Whether an address (host byte order) lies in the prefix.
        public func contains(_ hostOrderAddress: UInt32) -> Bool {
            hostOrderAddress & Self.mask(prefixLength) == network
        }

        public var description: String {
            prefixLength == 32 ? Self.dotted(network) : "\(Self.dotted(network))/\(prefixLength)"
        }

        static func mask(_ length: Int) -> UInt32 {
            length == 0 ? 0 : UInt32.max << UInt32(32 - length)
        }

        /// Strict dotted quad: four decimal parts 0…255 of 1…3 digits.
        static func parseIPv4(_ text: String) -> UInt32? {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var address: UInt32 = 0
            for part in parts {
                guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                      let octet = UInt32(part), octet <= 255 else { return nil }
                address = address << 8 | octet
            }
            return address
        }

        static func dotted(_ address: UInt32) -> String {
            [24, 16, 8, 0].map { String(address >> UInt32($0) & 0xFF) }.joined(separator: ".")
        }
    }

    /// Why `--osc-allow` could not be parsed. The description is the command-line error.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
        init(_ reason: String) { description = "--osc-allow: \(reason)" }
    }

    /// The allowed prefixes; empty allows everyone.
    public let prefixes: [Prefix]

    /// Allows every sender.
    public static let everyone = OSCAllowList(prefixes: [])

    public init(prefixes: [Prefix]) {
        self.prefixes = prefixes
    }

    /// Parses `--osc-allow`: comma-separated addresses and prefixes, spaces around entries
    /// ignored (`127.0.0.1,192.168.1.0/24,10.0.0.0/8`). An empty option or entry is an error:
    /// leave the option out to allow everyone.
    public init(parsing text: String) throws(ParseError) {
        guard !text.trimmingSpaces.isEmpty else {
            throw ParseError("no addresses given (leave the option out to allow every sender)")
        }
        var prefixes: [Prefix] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = String(entry).trimmingSpaces
            guard !trimmed.isEmpty else { throw ParseError("empty entry in '\(text)'") }
            prefixes.append(try Prefix(parsing: trimmed))
        }
        self.init(prefixes: prefixes)
    }

    /// Whether every sender is allowed.
    public var allowsEveryone: Bool { prefixes.isEmpty }

    /// Whether packets from `peer` may take effect.
    public func allows(_ peer: OSCPeer) -> Bool {
        prefixes.isEmpty || prefixes.contains { $0.contains(peer.hostOrderAddress) }
    }

    public var description: String {
        prefixes.isEmpty ? "every sender" : prefixes.map(\.description).joined(separator: ",")
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
