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

    /// The values to request when loading the patch, in the order to request them (see
    /// `loadingSteps(of:descriptors:)`, flattened).
    ///
    /// Loading sets every parameter the patch holds (the `/processing/*` values wait for a
    /// session when none is active). Refuse the load before requesting anything when it cannot
    /// succeed as a whole (`needsHearingProfile` without a profile): a patch is never applied
    /// half-way on purpose.
    public func loadingOrder(descriptors: [ParameterDescriptor]) -> [(address: String, value: ParameterValue)] {
        Self.loadingSteps(of: parameters, descriptors: descriptors).flatMap { $0 }
    }

    /// `values` (a patch's, or the values before a load to restore) in the steps to request
    /// them, each step in order:
    ///
    /// 1. `/processing/enabled` first when the values turn personalization off (nothing is
    ///    heard half-changed with the old preset); every other parameter in descriptor order
    ///    (the kernels); then `/processing/preset`, then `/processing/intensity`;
    /// 2. `/processing/enabled` when the values turn personalization on, alone, once step 1 was
    ///    applied: enabling is refused while no preset is applied (`can_enable`), so it must see
    ///    the preset of step 1, and it starts with its preset and intensity in place (the order
    ///    of the recommendation for a new profile).
    ///
    /// Empty steps are left out.
    public static func loadingSteps(of values: [String: ParameterValue], descriptors: [ParameterDescriptor])
        -> [[(address: String, value: ParameterValue)]] {
        let enabledAddress = ParameterModel.processingEnabled.address
        var first: [(address: String, value: ParameterValue)] = []
        var last: [(address: String, value: ParameterValue)] = []
        if let enabled = values[enabledAddress] {
            if enabled == .bool(true) { last.append((enabledAddress, enabled)) } else { first.append((enabledAddress, enabled)) }
        }
        // Everything not bound to the session (the kernels), in descriptor order.
        let kernels = descriptors.filter { $0.binding?.isSession != true }.map(\.address).compactMap { address in
            values[address].map { (address: address, value: $0) }
        }
        let personalization = [ParameterModel.processingPreset, ParameterModel.processingIntensity].map(\.address).compactMap { address in
            values[address].map { (address: address, value: $0) }
        }
        return [first + kernels + personalization, last].filter { !$0.isEmpty }
    }
}
