import SoundFitModel

/// The patch loaded or saved last (an AUv3 host's current preset), and whether the parameters
/// have been changed since.
public struct CurrentPatch: Sendable, Equatable, CustomStringConvertible {
    public var number: Int
    public var name: String
    /// The current values differ from the patch's.
    public var isModified: Bool

    public init(number: Int, name: String, isModified: Bool = false) {
        self.number = number
        self.name = name
        self.isModified = isModified
    }

    /// `2 'Lowpass 1 kHz'`, `-1 'Evening' (modified)`.
    public var description: String { "\(number) '\(name)'\(isModified ? " (modified)" : "")" }
}

/// Keeps the current patch and decides `isModified` by comparing values: a parameter moved
/// away and back again leaves the patch unmodified.
///
/// A value type; the owner (the runtime's controller) keeps it under its lock and calls
/// `valueApplied(_:at:)` (or `update(values:)`) after every applied change, `select` after a load
/// or save, `forget` after a delete. Each returns whether `current` changed, i.e. whether
/// subscribers need a new `/patch/current`.
public struct CurrentPatchTracker: Sendable, Equatable {
    /// The current patch, or nil before any load or save.
    public private(set) var current: CurrentPatch?
    /// The patch's values `isModified` compares with.
    private var reference: [String: ParameterValue] = [:]
    /// The parameter values as last reported.
    private var values: [String: ParameterValue] = [:]

    public init() {}

    /// Restores the current patch of a saved state. `patch` is the library's patch of that
    /// number; when it is gone or renamed (deleted, or a factory patch renamed by an update),
    /// there is nothing to compare with and no current patch. `values`: the restored parameters.
    public init(restoring saved: CurrentPatch?, patch: Patch?, values: [String: ParameterValue]) {
        self.values = values
        guard let saved, let patch, patch.number == saved.number, PatchName.key(patch.name) == PatchName.key(saved.name) else {
            return
        }
        select(patch, values: values)
    }

    /// A patch was loaded or saved: it becomes current. `values` are the parameter values after
    /// the load (nil: exactly the patch's). If a value could not be applied, the patch is
    /// current and modified.
    @discardableResult
    public mutating func select(_ patch: Patch, values: [String: ParameterValue]? = nil) -> Bool {
        let before = current
        current = CurrentPatch(number: patch.number, name: patch.name)
        reference = patch.parameters
        self.values = values ?? self.values.merging(patch.parameters) { _, new in new }
        recompute()
        return current != before
    }

    /// One parameter's new value was applied.
    @discardableResult
    public mutating func valueApplied(_ value: ParameterValue, at address: String) -> Bool {
        values[address] = value
        let before = current
        recompute()
        return current != before
    }

    /// The parameter values changed (addresses not in `values` keep their last value).
    @discardableResult
    public mutating func update(values newValues: [String: ParameterValue]) -> Bool {
        values.merge(newValues) { _, new in new }
        let before = current
        recompute()
        return current != before
    }

    /// A patch was deleted: if it was current, there is no current patch any more.
    @discardableResult
    public mutating func forget(number: Int) -> Bool {
        guard current?.number == number else { return false }
        current = nil
        reference = [:]
        return true
    }

    private mutating func recompute() {
        guard current != nil else { return }
        current?.isModified = reference.contains { address, value in
            values[address].map { $0 != value } ?? false
        }
    }
}
