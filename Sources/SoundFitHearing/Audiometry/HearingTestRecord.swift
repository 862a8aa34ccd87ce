import Foundation
import SoundFitJSON

/// A finished hearing test as it is kept in the state directory (`hearing-tests/<date>.json`):
/// when, with which settings and calibration, and each ear's thresholds, frequencies without a
/// response and reliability (the verdict and what it rests on).
public struct HearingTestRecord: Sendable {
    public static let formatVersion = 1

    public var date: Date
    public var frequencies: [Double]
    public var settings: HearingTestSettings
    /// dB SPL of a full-scale sine, as used for the test.
    public var calibration: Double
    public var results: [PureToneAudiometry.EarResult]

    public init(date: Date, frequencies: [Double], settings: HearingTestSettings, calibration: Double,
                results: [PureToneAudiometry.EarResult]) {
        self.date = date
        self.frequencies = frequencies
        self.settings = settings
        self.calibration = calibration
        self.results = results
    }

    /// `2026-11-24T14:20:07Z`: the file's name without `.json` (colons become `-` so every
    /// file system takes it).
    public var fileStem: String {
        Self.isoDate(date).replacingOccurrences(of: ":", with: "-")
    }

    static func isoDate(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    public var json: JSONValue {
        let timing = settings.timing
        let ears: [JSONValue] = results.map { result in
            var object = JSONObject()
            object.append("ear", .string(result.ear.rawValue))
            object.append("reliability", .string(result.isReliable ? "reliable" : "unreliable"))
            object.append("thresholds", .array(result.thresholds.map {
                .object(JSONObject(["hz": .number($0.frequency), "db_hl": .number($0.level)]))
            }))
            object.append("no_response_hz", .array(result.noResponse.map { .number($0) }))
            object.append("retest_difference_db", result.retestDifference.map { .number($0) } ?? .null)
            object.append("false_alarm_rate", .number(result.falseAlarmRate))
            object.append("catch_trials", .number(result.catchTrials))
            object.append("catch_trials_answered", .number(result.catchTrialsAnswered))
            object.append("presses_outside_windows", .number(result.pressesOutsideWindows))
            object.append("presentations", .number(result.presentations))
            return .object(object)
        }
        return .object(JSONObject([
            "version": .number(Self.formatVersion),
            "date": .string(Self.isoDate(date)),
            "frequencies_hz": .array(frequencies.map { .number($0) }),
            "settings": .object(JSONObject([
                "tone_seconds": .number(timing.toneSeconds), "window_start": .number(timing.windowStart),
                "window_end": .number(timing.windowEnd), "gap_min": .number(timing.gapMinimum),
                "gap_max": .number(timing.gapMaximum), "stimulus": .string(settings.isPulsed ? "pulsed" : "steady"),
                "max_db_hl": .number(settings.maximumLevel), "earphone": .string(settings.earphone.name),
                "calibration_db_spl": .number(calibration),
            ])),
            "ears": .array(ears),
        ]))
    }

    /// The record as a file.
    public func encoded() -> Data { json.fileData() }
}
