import SoundFitJSON

/// `GET /verify[?tones=0|1]`: the verification of the running instance's current fitting
/// (`soundfit verify`'s numbers: speech-noise insertion gain per ear, level and band against the
/// target, and the pure-tone input-output curves unless `tones=0`), as JSON. It passes the
/// server's access checks like every route (`WebAccess`: host, origin, token), as a costly read:
/// a foreign `Origin` and a missing token (when the port has one) are refused as for a write.
///
/// The verification itself is the composition root's (`verify`): it renders offline, on a
/// thread of its own, from a copy of the current state, never on the audio thread. It takes
/// seconds (at 48 kHz, whatever the instance runs at); GET only (a HEAD would cost as much); a
/// second request while one runs gets a 503, as does an instance without a hearing
/// profile (with the reason).
public enum VerifyRoute {
    public static let path = "/verify"

    /// What `verify` answers: the report's JSON, or why there is none.
    public enum Outcome: Sendable {
        case report(JSONValue)
        case unavailable(String)
    }

    public static func route(verify: @escaping @Sendable (_ includeTones: Bool) async -> Outcome) -> HTTPRoute {
        HTTPRoute(.exact(path), methods: [.GET], isCostly: true) { request in
            var includeTones = true
            for item in request.queryItems {
                guard item.name == "tones" else {
                    return .error(.badRequest, "unknown query parameter \"\(item.name)\" (expected tones)")
                }
                switch item.value {
                case "1", "true": includeTones = true
                case "0", "false": includeTones = false
                default: return .error(.badRequest, "tones: expects 0 or 1, got \"\(item.value)\"")
                }
            }
            switch await verify(includeTones) {
            case .report(let json): return .json(json)
            case .unavailable(let reason): return .error(.serviceUnavailable, reason)
            }
        }
    }
}
