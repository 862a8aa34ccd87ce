import Foundation
import Glibc
import SoundFitTestSupport

/// Standard audiograms (Bisgaard, Vlaming & Dahlquist 2010, Trends in Amplification 14(2)) as the test
/// fixtures of the personalization tests: JSON profile files for `--profile` and
/// `presets --audiogram`, OSC arguments for `/profile/audiogram`.
struct TestAudiogram {
    var points: [(hz: Double, dbHL: Double)]

    static let standardFrequencies = StandardAudiogramLevels.frequencies

    static let n2 = TestAudiogram(standardFrequencies, StandardAudiogramLevels.levels("N2"))
    static let n3 = TestAudiogram(standardFrequencies, StandardAudiogramLevels.levels("N3"))
    /// Normal hearing: 0 dB HL everywhere.
    static let normal = TestAudiogram(standardFrequencies, [Double](repeating: 0, count: 10))

    init(_ frequencies: [Double], _ levels: [Double]) {
        points = Array(zip(frequencies, levels)).map { (hz: $0.0, dbHL: $0.1) }
    }

    var json: [[String: Double]] { points.map { ["hz": $0.hz, "db_hl": $0.dbHL] } }

    /// `,s ear ,f hz ,f db …`.
    func oscArguments(ear: String) -> [OSCValue] {
        [.string(ear)] + points.flatMap { [OSCValue.float(Float($0.hz)), .float(Float($0.dbHL))] }
    }

    func threshold(at hz: Double) -> Double { points.first { $0.hz == hz }!.dbHL }

    /// NAL-R / NAL-RP insertion gain (dB) at one of the formula's points, computed here from the
    /// formula in hearing.md (independent of SoundFitHearing).
    func nalR(at hz: Double) -> Double {
        let k: [Double: Double] = [250: -17, 500: -8, 1000: 1, 1500: 1, 2000: -1, 3000: -2, 4000: -2, 6000: -2]
        let h3fa = (threshold(at: 500) + threshold(at: 1000) + threshold(at: 2000)) / 3
        var gain = 0.31 * threshold(at: hz) + 0.15 * h3fa + k[hz]!
        if h3fa > 60 { gain += 0.2 * (h3fa - 60) }
        return max(gain, 0)
    }

    /// A profile file `{"version": 1, "left": […], "right": […]}` in `directory`.
    static func profileFile(left: TestAudiogram, right: TestAudiogram?, in directory: URL,
                            name: String = "profile.json") throws -> URL {
        var object: [String: Any] = ["version": 1, "left": left.json]
        if let right { object["right"] = right.json }
        let url = directory.appendingPathComponent(name)
        try JSONFile.write(object, to: url)
        return url
    }
}

/// One band of a preset printed by `soundfit presets` (the fields the tests use).
struct PrintedBand {
    var centre: Double
    var gain: Double
    var referenceLevel: Double
    /// The dynamics (the defaults of a preset file when not printed).
    var ratio = 1.0
    var knee = 35.0
    var maximumGain = 60.0
    var outputLimit = 140.0
}

/// The presets `soundfit presets --audiogram FILE --tech-level N` prints: variant → ear → bands.
struct PrintedPresets {
    var variants: [String: (left: [PrintedBand], right: [PrintedBand], calibration: Double)]
    var order: [String]

    static func generate(profile: URL, techLevel: Int = 3) throws -> PrintedPresets {
        let result = try SoundFitCommandLine.run(["presets", "--audiogram", profile.path, "--tech-level", "\(techLevel)"])
        guard result.succeeded else {
            throw IntegrationError("soundfit presets failed: \(result.standardError)")
        }
        guard let array = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] else {
            throw IntegrationError("soundfit presets printed no JSON array: \(result.standardOutput.prefix(300))")
        }
        var presets = PrintedPresets(variants: [:], order: [])
        for preset in array {
            guard let variant = preset["variant"] as? String,
                  let calibration = (preset["calibration_db_spl"] as? NSNumber)?.doubleValue else {
                throw IntegrationError("preset without variant or calibration: \(preset)")
            }
            func bands(_ ear: String) throws -> [PrintedBand] {
                guard let list = preset[ear] as? [[String: Any]] else { throw IntegrationError("preset \(variant) lacks \(ear)") }
                return try list.map { band in
                    guard let centre = (band["centre_hz"] as? NSNumber)?.doubleValue,
                          let gain = (band["gain_db"] as? NSNumber)?.doubleValue,
                          let reference = (band["reference_level_db_spl"] as? NSNumber)?.doubleValue
                    else { throw IntegrationError("band lacks fields: \(band)") }
                    var printed = PrintedBand(centre: centre, gain: gain, referenceLevel: reference)
                    func number(_ key: String) -> Double? { (band[key] as? NSNumber)?.doubleValue }
                    printed.ratio = number("ratio") ?? printed.ratio
                    printed.knee = number("knee_db_spl") ?? printed.knee
                    printed.maximumGain = number("maximum_gain_db") ?? printed.maximumGain
                    printed.outputLimit = number("output_limit_db_spl") ?? printed.outputLimit
                    return printed
                }
            }
            presets.variants[variant] = (try bands("left"), try bands("right"), calibration)
            presets.order.append(variant)
        }
        return presets
    }
}

/// Calibration: a full-scale sine (amplitude 1) stands for `calibration` dB SPL, so a sine of
/// band level `level` dB SPL has amplitude 10^((level − calibration)/20).
func sineAmplitude(levelDBSPL level: Double, calibration: Double = 100) -> Double {
    pow(10, (level - calibration) / 20)
}

/// Residual of `captured` against `played` delayed by `lag` (looped), over the steady window,
/// relative to the played signal, in dB (−inf when bit-exact).
func residualDecibels(captured: [Float], played: [Float], lag: Int) -> Double {
    let window = Capture.steady(captured)
    let count = played.count
    var error = 0.0, reference = 0.0
    for (offset, sample) in window.enumerated() {
        let n = Capture.discardFrames + offset
        let expected = Double(played[((n - lag) % count + count) % count])
        error += (Double(sample) - expected) * (Double(sample) - expected)
        reference += expected * expected
    }
    return 10 * log10(error / reference)
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; returns the time it took,
/// or nil on timeout.
@discardableResult
func waitForCondition(timeout: Duration, _ condition: () -> Bool) -> Duration? {
    let start = ContinuousClock.now
    while !condition() {
        if ContinuousClock.now - start >= timeout { return nil }
        Thread.sleep(forTimeInterval: 0.02)  // polls a condition (with a deadline)
    }
    return ContinuousClock.now - start
}
