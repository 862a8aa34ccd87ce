import Foundation
import SoundFitDSP
import Synchronization

/// One metering window's reading: per channel, the input and output level and the
/// personalization's bands.
public struct MeterReading: Sendable, Equatable {
    /// Levels below this read as it: the reading of silence (dBFS).
    public static let floor = -120.0

    public struct Channel: Sendable, Equatable {
        /// dBFS over the window (0 dBFS: a full-scale sample; a full-scale sine's RMS reads −3.01).
        public var inputPeak: Double
        public var inputRMS: Double
        public var outputPeak: Double
        public var outputRMS: Double
        /// Per band of the running personalization preset (empty while the stage is bypassed):
        /// the gain it applies now (dB, after intensity) and the largest gain reduction of the
        /// window (dB, ≥ 0; see `PersonalizationProcessor.bandMeter`).
        public var bandGains: [Double]
        public var bandReductions: [Double]

        public init(inputPeak: Double, inputRMS: Double, outputPeak: Double, outputRMS: Double,
                    bandGains: [Double], bandReductions: [Double]) {
            self.inputPeak = inputPeak
            self.inputRMS = inputRMS
            self.outputPeak = outputPeak
            self.outputRMS = outputRMS
            self.bandGains = bandGains
            self.bandReductions = bandReductions
        }
    }

    public var channels: [Channel]
    /// Frames measured in the window.
    public var frames: Int

    public init(channels: [Channel], frames: Int) {
        self.channels = channels
        self.frames = frames
    }

    /// `linear` (an amplitude) in dB, at least `floor`.
    static func decibels(amplitude linear: Float) -> Double {
        linear > 0 ? max(Decibels.decibels(Double(linear)), floor) : floor
    }

    /// This reading and a later one as one window: the larger peaks and reductions, the mean
    /// square over both, the later band gains. For streams slower than the metering rate.
    public func merged(with later: MeterReading) -> MeterReading {
        guard channels.count == later.channels.count, frames > 0 else { return later }
        let total = Double(frames + later.frames)
        func power(_ a: Double, _ b: Double) -> Double {
            let sum = Double(frames) * pow(10, a / 10) + Double(later.frames) * pow(10, b / 10)
            return sum > 0 ? max(10 * log10(sum / total), Self.floor) : Self.floor
        }
        var result = later
        result.frames = frames + later.frames
        for index in channels.indices {
            let old = channels[index]
            result.channels[index].inputPeak = max(old.inputPeak, later.channels[index].inputPeak)
            result.channels[index].outputPeak = max(old.outputPeak, later.channels[index].outputPeak)
            result.channels[index].inputRMS = power(old.inputRMS, later.channels[index].inputRMS)
            result.channels[index].outputRMS = power(old.outputRMS, later.channels[index].outputRMS)
            if old.bandReductions.count == later.channels[index].bandReductions.count {
                result.channels[index].bandReductions = zip(old.bandReductions, later.channels[index].bandReductions)
                    .map { max($0, $1) }
            }
        }
        return result
    }
}

/// The meters' control side. Metering runs on the audio thread only while at least one caller
/// of `startMetering` has not called `stopMetering`.
///
/// Thread rules: any thread except the audio thread.
extension AudioEngine {
    /// Starts metering (counted: every call needs its `stopMetering`).
    public func startMetering() {
        mailbox.realtime.meters.listeners.pointee.add(1, ordering: .releasing)
    }

    /// Ends one `startMetering`.
    public func stopMetering() {
        let listeners = mailbox.realtime.meters.listeners
        while true {
            let current = listeners.pointee.load(ordering: .relaxed)
            guard current > 0 else { return }
            if listeners.pointee.compareExchange(expected: current, desired: current - 1, ordering: .acquiringAndReleasing).exchanged {
                return
            }
        }
    }

    /// Whether anyone meters now.
    public var isMetering: Bool { mailbox.realtime.meters.listeners.pointee.load(ordering: .acquiring) > 0 }

    /// The reading of the window since the last `takeMeterReading` (nil when no cycle was
    /// measured in it: no audio, or metering off), and opens the next window. One taker at a
    /// time (the meter stream); `latestMeterReading` does not disturb it.
    public func takeMeterReading() -> MeterReading? {
        let meters = mailbox.realtime.meters
        let window = meters.window.pointee.load(ordering: .relaxed)
        let reading = readMeters(window: window)
        meters.window.pointee.store(window &+ 1, ordering: .releasing)
        return reading
    }

    /// The last block the audio thread published, whatever its window (its band gains are the
    /// current ones; its levels cover the window so far), or nil before any.
    public func latestMeterReading() -> MeterReading? { readMeters(window: nil) }

    /// Meters for `cycles` new cycles and returns their reading: what the personalization applies
    /// now, without a listener. Nil when the audio thread does not run that many cycles within
    /// `timeout`.
    public func meterOnce(cycles: UInt64 = 2, timeout: Duration = .milliseconds(250)) async -> MeterReading? {
        startMetering()
        defer { stopMetering() }
        let start = cycleCount
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while cycleCount < start + cycles + 1 {
            guard clock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return latestMeterReading()
    }

    private func readMeters(window: UInt32?) -> MeterReading? {
        let meters = mailbox.realtime.meters
        var words = [UInt32](repeating: 0, count: MeterMailbox.blockWords)
        var consistent = false
        for _ in 0..<100 where !consistent { consistent = meters.read(into: &words) }
        guard consistent else { return nil }
        let frames = Int(words[1]), channelCount = Int(words[2]), bands = Int(words[3])
        guard frames > 0, channelCount > 0 else { return nil }
        if let window, words[0] != window { return nil }
        func value(_ index: Int) -> Float { Float(bitPattern: words[index]) }
        func rms(_ index: Int) -> Double { MeterReading.decibels(amplitude: value(index).squareRoot()) }
        let channels = (0..<channelCount).map { channel in
            let base = MeterMailbox.headerWords + channel * MeterMailbox.channelWords
            return MeterReading.Channel(
                inputPeak: MeterReading.decibels(amplitude: value(base)), inputRMS: rms(base + 1),
                outputPeak: MeterReading.decibels(amplitude: value(base + 2)), outputRMS: rms(base + 3),
                bandGains: (0..<bands).map { Double(value(base + 4 + 2 * $0)) },
                bandReductions: (0..<bands).map { Double(value(base + 5 + 2 * $0)) })
        }
        return MeterReading(channels: channels, frames: frames)
    }
}
