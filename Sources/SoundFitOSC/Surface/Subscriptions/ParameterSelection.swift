import OSCCore
import SoundFitModel

/// The parameters a subscription follows: those an OSC address pattern selects, the pattern
/// matching a parameter's address or one of its containers (`/filter` and `/filter/*` both
/// select the filter's parameters), as `/list ,s pattern` does. Without a selection a
/// subscription follows every parameter.
///
/// The address space is fixed, so the pattern is resolved once, when the subscription is made,
/// into the set of addresses it selects; feedback then costs one set lookup per change.
public struct ParameterSelection: Sendable, Equatable {
    /// The pattern as the subscriber sent it (for `/subscribed`).
    public let pattern: String
    public let addresses: Set<String>

    /// Resolves `pattern` against every parameter. Throws when it is malformed or selects none.
    public init(_ pattern: String, parameters: [ParameterDescriptor] = ParameterModel.all) throws(SubscriptionError) {
        let compiled: OSCAddressPattern
        do throws(OSCAddressPattern.Problem) {
            compiled = try OSCAddressPattern(pattern)
            var addresses: Set<String> = []
            for descriptor in parameters where try compiled.matchesAddressOrContainer(of: descriptor.address) {
                addresses.insert(descriptor.address)
            }
            self.addresses = addresses
        } catch {
            throw .invalidPattern(pattern, reason: error.description)
        }
        guard !addresses.isEmpty else { throw .invalidPattern(pattern, reason: "it selects no parameter") }
        self.pattern = pattern
    }

    public func contains(_ address: String) -> Bool { addresses.contains(address) }
}
