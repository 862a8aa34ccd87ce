import SoundFitModel

extension Patch {
    /// The personalization preset variant the patch selects (`default`, `up`, `down`), or nil
    /// when it selects none.
    public var personalizationPresetVariant: String? {
        guard case .choice(let name)? = parameters[ParameterModel.processingPreset.address],
              name != PresetVariant.noneName else { return nil }
        return name
    }

    /// Whether loading the patch needs a hearing profile: its personalization preset is
    /// generated from one. Without a profile, refuse the load (see `loadingOrder`).
    public var needsHearingProfile: Bool { personalizationPresetVariant != nil }

    /// The values to request when loading the patch, in the order to request them:
    ///
    /// 1. `/processing/enabled` first when the patch turns personalization off (nothing is
    ///    heard half-changed with the old preset);
    /// 2. every other parameter in descriptor order (the kernels);
    /// 3. `/processing/preset`, then `/processing/intensity`;
    /// 4. `/processing/enabled` last when the patch turns personalization on, so it starts
    ///    with its preset and intensity in place (the order of the recommendation for a new profile).
    ///
    /// Loading sets every parameter the patch holds (the `/processing/*` values wait for a
    /// session when none is active). Refuse the load before requesting anything when it cannot
    /// succeed as a whole (`needsHearingProfile` without a profile): a patch is never applied
    /// half-way on purpose.
    public func loadingOrder(descriptors: [ParameterDescriptor]) -> [(address: String, value: ParameterValue)] {
        let enabledAddress = ParameterModel.processingEnabled.address
        var first: [(address: String, value: ParameterValue)] = []
        var last: [(address: String, value: ParameterValue)] = []
        if let enabled = parameters[enabledAddress] {
            if enabled == .bool(true) { last.append((enabledAddress, enabled)) } else { first.append((enabledAddress, enabled)) }
        }
        // Everything not bound to the session (the kernels), in descriptor order.
        let kernels = descriptors.filter { $0.binding?.isSession != true }.map(\.address).compactMap { address in
            parameters[address].map { (address: address, value: $0) }
        }
        let personalization = [ParameterModel.processingPreset, ParameterModel.processingIntensity].map(\.address).compactMap { address in
            parameters[address].map { (address: address, value: $0) }
        }
        return first + kernels + personalization + last
    }
}
