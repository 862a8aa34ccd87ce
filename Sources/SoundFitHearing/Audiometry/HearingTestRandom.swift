/// The hearing test's randomness, seeded so that a test can be told apart from chance and
/// replayed: SplitMix64 (Steele, Lea & Flood 2014), small, fast and with a full 2⁶⁴ period.
/// The seed is kept in the test's record (`HearingTestRecord.seed`); the catch trials and the
/// gaps between presentations each draw from a stream of their own (`stream(_:)`), so a change
/// in one does not shift the other.
public struct HearingTestRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    /// A generator of its own derived from `seed` for the purpose numbered `stream`.
    public static func stream(_ stream: UInt64, seed: UInt64) -> HearingTestRandom {
        var mixer = HearingTestRandom(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return HearingTestRandom(seed: mixer.next())
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
