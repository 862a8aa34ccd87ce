import Foundation
import Glibc
import SoundFitAudioFile
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The gain a listener gets is the gain prescribed, measured the way
    /// fittings are verified (speech-shaped noise at 55/65/80 dB SPL, insertion gain per band),
    /// and the preset's attack/release are the times ANSI S3.22 measures. Offline, through the
    /// real `soundfit render` binary.
    @Suite("Delivered gain and time constants") struct DeliveredGain {
        static let calibration = 100.0
        static let sampleRate = Double(TestJackServer.sampleRate)
        /// Samples per speech level: one period of the (periodic) speech-shaped noise, 5.46 s.
        static let segment = 1 << 18
        /// Skipped at the start of each segment: the detectors settle (release ≤ 100 ms) long
        /// before; what remains (4.5 s) is measured.
        static let settle = 45_000
        static let levels = [55.0, 65.0, 80.0]

        // MARK: NAL-RP, computed here from hearing.md (independent of SoundFitHearing)

        static let nalFrequencies: [Double] = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
        /// Byrne, Parkinson & Newall 1991 severe-loss correction rows (hearing.md): H(2000) → dB.
        static let severeRows: [(Double, [Double])] = [
            (95, [4, 3, 0, -1, -2, -2, -2, -2]), (100, [6, 4, 0, -2, -3, -3, -3, -3]),
            (105, [8, 5, 0, -3, -5, -5, -5, -5]), (110, [11, 7, 0, -3, -6, -6, -6, -6]),
            (115, [13, 8, 0, -4, -8, -8, -8, -8]), (120, [15, 9, 0, -5, -9, -9, -9, -9]),
        ]

        /// NAL-RP insertion gain (dB) at `frequency` (log-frequency interpolation, 250…6000 Hz).
        static func nalRP(_ name: String, at frequency: Double) -> Double {
            let thresholds = Dictionary(uniqueKeysWithValues: zip(StandardAudiogramLevels.frequencies,
                                                                  StandardAudiogramLevels.levels(name)))
            let h3fa = (thresholds[500]! + thresholds[1000]! + thresholds[2000]!) / 3
            let k: [Double] = [-17, -8, 1, 1, -1, -2, -2, -2]
            let h2000 = thresholds[2000]!
            var correction = [Double](repeating: 0, count: 8)
            if h2000 >= 95 {
                let rows = severeRows
                if h2000 >= rows.last!.0 {
                    correction = rows.last!.1
                } else if let i = rows.indices.dropLast().first(where: { h2000 >= rows[$0].0 && h2000 < rows[$0 + 1].0 }) {
                    let t = (h2000 - rows[i].0) / (rows[i + 1].0 - rows[i].0)
                    correction = (0..<8).map { rows[i].1[$0] + t * (rows[i + 1].1[$0] - rows[i].1[$0]) }
                }
            }
            let gains = nalFrequencies.indices.map { i -> Double in
                var gain = 0.31 * thresholds[nalFrequencies[i]]! + 0.15 * h3fa + k[i]
                if h3fa > 60 { gain += 0.2 * (h3fa - 60) }
                return max(gain + correction[i], 0)
            }
            // Outside 250…6000 Hz the rule tapers to 0 dB at 50 Hz and 10 kHz (hearing.md, NalRP.m).
            let frequencies = [50.0] + nalFrequencies + [10000], points = [0.0] + gains + [0]
            if frequency <= 50 || frequency >= 10000 { return 0 }
            let i = frequencies.indices.dropLast().first { frequency < frequencies[$0 + 1] }!
            let t = log2(frequency / frequencies[i]) / log2(frequencies[i + 1] / frequencies[i])
            return points[i] + t * (points[i + 1] - points[i])
        }

        /// The preset's static law at band level `level` (`BandDynamics.gain(atLevel:)`, from the
        /// printed fields): compression above the knee, the 0 dB floor (the presets' default
        /// `minimum_gain_db`), the maximum gain, the band output limit. Speech at 55 dB SPL is far
        /// above every expansion knee, so expansion is left out.
        static func law(_ band: PrintedBand, at level: Double) -> Double {
            let slope = 1 / band.ratio - 1
            let gain = min(max(band.gain + slope * (max(level, band.knee) - band.referenceLevel), 0), band.maximumGain)
            return min(gain, band.outputLimit - level)
        }

        // MARK: Rendering

        static func writeFile(_ channels: [[Float]], to url: URL) throws {
            let writer = try AudioFileWriter(path: url.path, format: .wav, encoding: .float, sampleRate: TestJackServer.sampleRate,
                                             channelCount: channels.count)
            try writer.write(channels)
            try writer.commit()
        }

        /// Renders `channels` through SoundFit with `profile` at `techLevel`, intensity 1, the
        /// safety limit out of the way (130 dB SPL); returns the output channels.
        static func render(_ channels: [[Float]], profile: URL, techLevel: Int, in directory: URL) throws -> [[Float]] {
            let input = directory.appendingPathComponent("in.wav"), output = directory.appendingPathComponent("out.wav")
            try writeFile(channels, to: input)
            let arguments = ["render", input.path, output.path, "--profile", profile.path, "--tech-level", "\(techLevel)",
                             "--max-output", "130", "--set", "/processing/enabled=1",
                             "--set", "/processing/intensity=1"]
            let result = try runToEnd(try SoundFitBinary.path(), arguments)
            guard result.status == 0 else { throw IntegrationError("render failed: \(result.stderr)") }
            let reader = try AudioFileReader(path: output.path)
            return try reader.read(frames: reader.frameCount)
        }

        /// The speech-shaped noise at each of `levels`, one segment each, in a row.
        static func speechSignal() -> [Float] {
            let unit = SpeechShapedNoise.samples(level: 0, fullScaleSPL: calibration, sampleRate: sampleRate,
                                                 seconds: Double(segment) / sampleRate)
            precondition(unit.count == segment)
            return levels.flatMap { level in
                let scale = Float(pow(10, level / 20))
                return unit.map { $0 * scale }
            }
        }

        /// The profile pairs rendered (left, right): every standard audiogram once.
        static let pairs: [(String, String)] = [("N1", "N2"), ("N3", "N4"), ("N5", "N6"), ("N7", "S1"), ("S2", "S3")]

        @Test("insertion gain with speech-shaped noise = NAL-RP at 65 dB SPL and the preset's law at 55 and 80",
              arguments: [1, 2, 3, 4])
        func speechGain(techLevel: Int) throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-delivered")
            defer { try? FileManager.default.removeItem(at: directory) }
            let signal = Self.speechSignal()
            let analysis = BandPowerAnalysis(sampleRate: Self.sampleRate)
            let layout = MultibandLayout(techLevel: techLevel)!
            // Every band centre from 250 Hz up: ±1 dB to 4 kHz, ±2 dB to 6 kHz (the issue's 6 kHz
            // tolerance: 6 kHz at tech level 3, 5.7 kHz at 4). Above 6 kHz (8 kHz at tech levels
            // 2 and 4, 11.3 kHz at 4) NAL-RP has ended and tapers to 0 dB at 10 kHz, steeper than
            // the equalizer's top bands follow: measured and reported, not asserted
            // (`FittingVerification.tolerance` judges the same way).
            let centres = layout.bandCentres.filter { $0 >= 249 }
            var worst = 0.0, worstHigh = 0.0, worstAbove6k = 0.0
            for (leftName, rightName) in Self.pairs {
                let left = TestAudiogram(StandardAudiogramLevels.frequencies, StandardAudiogramLevels.levels(leftName))
                let right = TestAudiogram(StandardAudiogramLevels.frequencies, StandardAudiogramLevels.levels(rightName))
                let profile = try TestAudiogram.profileFile(left: left, right: right, in: directory)
                let presets = try PrintedPresets.generate(profile: profile, techLevel: techLevel)
                let preset = try #require(presets.variants["default"])
                let output = try Self.render([signal, signal], profile: profile, techLevel: techLevel, in: directory)
                for (ear, name, bands) in [(0, leftName, preset.left), (1, rightName, preset.right)] {
                    for (segmentIndex, level) in Self.levels.enumerated() {
                        let range = (segmentIndex * Self.segment + Self.settle)..<((segmentIndex + 1) * Self.segment)
                        let gains = analysis.insertionGains(input: signal[range], output: output[ear][range], centres: centres)
                        for (centre, measured) in zip(centres, gains) {
                            let band = try #require(bands.first { abs($0.centre - centre) < 0.5 })
                            // At 65 dB SPL the target is NAL-RP itself (no cap may cut it); at 55
                            // and 80 what the preset's law gives at that band level.
                            let target = level == 65 ? Self.nalRP(name, at: centre)
                                                     : Self.law(band, at: band.referenceLevel + level - 65)
                            let tolerance = centre <= 4001 ? 1.0 : 2.0
                            let error = measured - target
                            if centre > 6001 {
                                worstAbove6k = max(worstAbove6k, abs(error))
                                continue
                            }
                            if centre <= 4001 { worst = max(worst, abs(error)) } else { worstHigh = max(worstHigh, abs(error)) }
                            #expect(abs(error) <= tolerance,
                                    "tech level \(techLevel), \(name), \(level) dB SPL, \(Int(centre)) Hz: measured \(String(format: "%.2f", measured)) dB, target \(String(format: "%.2f", target)) dB")
                        }
                    }
                }
            }
            report("tech level \(techLevel): largest |insertion gain − target|, 250 Hz…4 kHz, 55/65/80 dB SPL", worst)
            if centres.contains(where: { $0 > 4001 && $0 <= 6001 }) {
                report("tech level \(techLevel): largest |insertion gain − target|, 4…6 kHz", worstHigh)
            }
            if centres.contains(where: { $0 > 6001 }) {
                report("tech level \(techLevel): largest |insertion gain − target| above 6 kHz (not asserted)", worstAbove6k)
            }
        }

        // MARK: ANSI S3.22 attack and release

        /// A tone at `frequency` stepping `low` → `high` → `low` dB SPL (`seconds` per part).
        static func toneSteps(frequency: Double, low: Double, high: Double, seconds: [Double]) -> (signal: [Float], steps: [Int]) {
            var signal: [Float] = [], steps: [Int] = []
            for (index, duration) in seconds.enumerated() {
                if index > 0 { steps.append(signal.count) }
                let amplitude = sineAmplitude(levelDBSPL: index == 1 ? high : low, calibration: calibration)
                let start = signal.count
                for n in 0..<Int(duration * sampleRate) {
                    signal.append(Float(amplitude * sin(2 * Double.pi * frequency * Double(start + n) / sampleRate)))
                }
            }
            return (signal, steps)
        }

        /// The envelope (dB) of a tone: RMS over one period of `frequency` (24 samples at 2 kHz),
        /// centred on each sample.
        static func envelope(_ signal: [Float], frequency: Double) -> [Double] {
            let window = Int((sampleRate / frequency).rounded())
            var sum = 0.0, result = [Double](repeating: -200, count: signal.count)
            for n in 0..<signal.count {
                sum += Double(signal[n]) * Double(signal[n])
                if n >= window { sum -= Double(signal[n - window]) * Double(signal[n - window]) }
                if n >= window - 1 { result[n - window / 2] = 10 * log10(max(sum / Double(window), 1e-30)) }
            }
            return result
        }

        /// Seconds from `step` until `envelope` stays within `tolerance` dB of its mean over the
        /// last 100 ms before `end`.
        static func settlingTime(_ envelope: [Double], step: Int, end: Int, tolerance: Double) -> (Double, Double) {
            let tail = (end - Int(0.1 * sampleRate))..<end
            let steady = tail.reduce(0) { $0 + envelope[$1] } / Double(tail.count)
            let last = (step..<end).last { abs(envelope[$0] - steady) > tolerance } ?? step
            return (Double(last + 1 - step) / sampleRate, steady)
        }

        /// N3, N5 and S2 compress at 2 kHz within the band law's range; N7's onset overshoot is
        /// caught by the ear's output limit, which the times then include (as a hearing aid's
        /// limiter is part of what ANSI S3.22 measures). N1 is left out: its output at 90 dB SPL
        /// is held by the output limit itself, so the step measures the limiter, not the detector.
        @Test("ANSI S3.22 attack and release at 2 kHz are the preset's, within 20 %", arguments: [2, 3, 4], ["N3", "N5", "N7", "S2"])
        func attackRelease(techLevel: Int, name: String) throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-ansi")
            defer { try? FileManager.default.removeItem(at: directory) }
            let audiogram = TestAudiogram(TestAudiogram.standardFrequencies, StandardAudiogramLevels.levels(name))
            let profile = try TestAudiogram.profileFile(left: audiogram, right: audiogram, in: directory)
            let result = try SoundFitCommandLine.run(["presets", "--audiogram", profile.path, "--tech-level", "\(techLevel)"])
            let printed = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
            let preset = try #require(printed.first { $0["variant"] as? String == "default" })
            let band = try #require((preset["left"] as? [[String: Any]])?.first { ($0["centre_hz"] as? NSNumber)?.doubleValue == 2000 })
            let statedAttack = try #require((band["attack_ms"] as? NSNumber)?.doubleValue) / 1000
            let statedRelease = try #require((band["release_ms"] as? NSNumber)?.doubleValue) / 1000

            let (signal, steps) = Self.toneSteps(frequency: 2000, low: 55, high: 90, seconds: [1, 0.6, 1])
            let output = try Self.render([signal, signal], profile: profile, techLevel: techLevel, in: directory)
            let envelope = Self.envelope(output[0], frequency: 2000)
            // The envelope is centred on a period: its last 12 values before the step down already
            // hear the step (up to −3 dB), so the steady part ends a period before it.
            let (attack, high) = Self.settlingTime(envelope, step: steps[0], end: steps[1] - 24, tolerance: 3)
            let (release, low) = Self.settlingTime(envelope, step: steps[1], end: signal.count - 24, tolerance: 4)
            report("\(name) tech level \(techLevel): attack (stated \(statedAttack * 1000) ms)", attack * 1000, unit: "ms")
            report("\(name) tech level \(techLevel): release (stated \(statedRelease * 1000) ms)", release * 1000, unit: "ms")
            // The band's gain must swing enough for the times to mean anything.
            #expect((low - 55) - (high - 90) > 4, "gain swing \((low - 55) - (high - 90)) dB")
            #expect(abs(attack - statedAttack) <= 0.2 * statedAttack, "attack \(attack * 1000) ms, stated \(statedAttack * 1000) ms")
            #expect(abs(release - statedRelease) <= 0.2 * statedRelease, "release \(release * 1000) ms, stated \(statedRelease * 1000) ms")
        }

        @Test("each ear's detectors hear only that ear: a 90 dB SPL tone on the left moves the right by < 0.05 dB")
        func earIndependence() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-ears")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n3, in: directory)
            let quiet = Self.toneSteps(frequency: 2000, low: 55, high: 55, seconds: [1]).signal
            let loud = Self.toneSteps(frequency: 2000, low: 90, high: 90, seconds: [1]).signal
            let silence = [Float](repeating: 0, count: quiet.count)
            let alone = try Self.render([silence, quiet], profile: profile, techLevel: 4, in: directory)
            let beside = try Self.render([loud, quiet], profile: profile, techLevel: 4, in: directory)
            func level(_ samples: [Float]) -> Double {
                let tail = samples[(samples.count / 2)...]
                return 10 * log10(tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(tail.count))
            }
            let difference = level(beside[1]) - level(alone[1])
            report("right ear's output with a 90 dB SPL left tone minus without", difference)
            #expect(abs(difference) < 0.05)
            // And the left ear did compress (the test would be empty otherwise).
            #expect(level(beside[0]) - 10 * log10(0.5 * pow(sineAmplitude(levelDBSPL: 90), 2)) < 15)
        }
    }
}
