import SoundFitDSP
import Synchronization

/// The meters' meeting point with the audio thread.
///
/// - Control → audio: `listeners` (the audio thread meters only while it is above 0, so metering
///   costs nothing when nobody listens) and `window` (bumped by the control side to start a new
///   metering window: the audio thread then starts its peaks, sums and maxima afresh).
/// - Audio → control: one block per cycle, published through a seqlock (`version` odd while the
///   audio thread writes; a reader retries when it changed): the window it belongs to, the frames
///   measured in it, the metered channel and band counts, and per channel the input and output
///   peak and mean square over the window, then per band the gain applied now and the largest
///   gain reduction of the window (Float bits).
///
/// Plain pointers only: copies never retain. Memory is owned by `EngineMailbox`.
public struct MeterMailbox: @unchecked Sendable {
    /// Channels metered at most (the first ones of a larger client).
    public static let maximumChannels = 16
    static var maximumBands: Int { MultibandLayout.maximumBandCount }
    /// Header words: window, frames, channels, bands.
    static var headerWords: Int { 4 }
    /// Words per channel: input peak, input mean square, output peak, output mean square, then
    /// per band its gain and its reduction.
    static var channelWords: Int { 4 + 2 * maximumBands }
    static var blockWords: Int { headerWords + maximumChannels * channelWords }

    let listeners: UnsafeMutablePointer<Atomic<UInt32>>
    let window: UnsafeMutablePointer<Atomic<UInt32>>
    let version: UnsafeMutablePointer<Atomic<UInt32>>
    let block: UnsafeMutablePointer<Atomic<UInt32>>

    static func allocate() -> MeterMailbox {
        func atomic(count: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
            let pointer = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: count)
            for index in 0..<count { (pointer + index).initialize(to: Atomic(0)) }
            return pointer
        }
        return MeterMailbox(listeners: atomic(count: 1), window: atomic(count: 1), version: atomic(count: 1),
                            block: atomic(count: blockWords))
    }

    func deallocate() {
        listeners.deallocate()
        window.deallocate()
        version.deallocate()
        block.deallocate()
    }

    /// Copies the last published block into `words` (`blockWords` of them) when no write raced
    /// the copy. Any thread but the audio thread.
    func read(into words: inout [UInt32]) -> Bool {
        let before = version.pointee.load(ordering: .acquiring)
        guard before & 1 == 0 else { return false }
        for index in 0..<Self.blockWords { words[index] = block[index].load(ordering: .acquiring) }
        return version.pointee.load(ordering: .acquiring) == before
    }
}
