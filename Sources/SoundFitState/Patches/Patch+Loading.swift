import SoundFitEngine

/// The session parameters whose order matters when a patch is loaded (the OSC contract's names).
enum SessionAddress {
    static let enabled = "/processing/enabled"
    static let intensity = "/processing/intensity"
    static let preset = "/processing/preset"
    /// `/processing/preset`'s value for "no preset".
    static let noPreset = "none"
}

extension Patch {
    /// The personalization preset variant the patch selects (`default`, `up`, `down`), or nil
    /// when it selects none.
    public var personalizationPreset: String? {
        guard case .choice(let name)? = parameters[SessionAddress.preset], name != SessionAddress.noPreset else { return nil }
        return name
    }

    /// Whether loading the patch needs a hearing profile: its personalization preset is
    /// generated from one. Without a profile, refuse the load (see `loadingOrder`).
    public var needsHearingProfile: Bool { personalizationPreset != nil }

    /// The values to request when loading the patch, in the order to request them:
    ///
    /// 1. `/processing/enabled` first when the patch turns personalization off (nothing is
    ///    heard half-changed with the old preset);
    /// 2. every other parameter in descriptor order (the kernels);
    /// 3. `/processing/preset`, then `/processing/intensity`;
    /// 4. `/processing/enabled` last when the patch turns personalization on, so it starts
    ///    with its preset and intensity in place (the order of the seed's recommendation).
    ///
    /// Loading sets every parameter the patch holds. Refuse the load before requesting
    /// anything when it cannot succeed as a whole (`needsHearingProfile` without a profile;
    /// no session for the `/processing/*` values): a patch is never applied half-way on purpose.
    public func loadingOrder(descriptors: [ParameterDescriptor]) -> [(address: String, value: ParameterValue)] {
        let session = [SessionAddress.enabled, SessionAddress.preset, SessionAddress.intensity]
        var first: [(address: String, value: ParameterValue)] = []
        var last: [(address: String, value: ParameterValue)] = []
        let enabled = parameters[SessionAddress.enabled]
        if let enabled {
            if enabled == .bool(true) { last.append((SessionAddress.enabled, enabled)) } else { first.append((SessionAddress.enabled, enabled)) }
        }
        let kernels = descriptors.map(\.address).filter { !session.contains($0) }.compactMap { address in
            parameters[address].map { (address: address, value: $0) }
        }
        let personalization = [SessionAddress.preset, SessionAddress.intensity].compactMap { address in
            parameters[address].map { (address: address, value: $0) }
        }
        return first + kernels + personalization + last
    }
}
