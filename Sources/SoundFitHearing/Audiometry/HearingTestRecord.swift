import Foundation
import SoundFitJSON

/// A finished hearing test as it is kept in the state directory (`hearing-tests/<date>.json`):
/// when, by which software, with which settings, calibration and reference levels, the seed of
/// its randomness, the listener's id, every presentation (`Presentation`, the trial-by-trial
/// log) and each ear's thresholds, frequencies without a response, reliability and the reasons
/// it may not become the profile by itself (`EarResult.problems`).
public struct HearingTestRecord: Sendable {
    /// 2: the trial log, version, sample rate, seed, listener, reference levels and problems.
    public static let formatVersion = 2

    /// One presentation as it happened: a tone, or a silent catch trial (nothing played).
    public struct Presentation: Sendable, Equatable {
        /// The onset (wall clock): when the audio thread started the tone, or for a catch trial
        /// when it would have.
        public var time: Date
        public var ear: Ear
        public var frequency: Double
        /// dB HL of the tone; nil for a catch trial.
        public var level: Double?
        /// The tone's peak level in dBFS as played (nil for a catch trial).
        public var fullScaleLevel: Double?
        /// dB EM of the masking noise in the other ear (`Trial.maskingLevel`); nil: none.
        public var maskingLevel: Double?
        public var isRetest: Bool
        /// A press fell in this presentation's response window.
        public var heard: Bool
        /// Seconds from the onset to the first press in the window; nil without one.
        public var latency: Double?

        public var isCatchTrial: Bool { level == nil }

        public init(time: Date, ear: Ear, frequency: Double, level: Double?, fullScaleLevel: Double?,
                    maskingLevel: Double?, isRetest: Bool, heard: Bool, latency: Double?) {
            self.time = time
            self.ear = ear
            self.frequency = frequency
            self.level = level
            self.fullScaleLevel = fullScaleLevel
            self.maskingLevel = maskingLevel
            self.isRetest = isRetest
            self.heard = heard
            self.latency = latency
        }
    }

    public var date: Date
    public var frequencies: [Double]
    public var settings: HearingTestSettings
    /// dB SPL of a full-scale sine, as used for the test.
    public var calibration: Double
    /// The per-ear, per-frequency corrections in force (`/calibration/measured`).
    public var calibrationTable: CalibrationTable
    public var results: [PureToneAudiometry.EarResult]
    /// `SoundFitVersion.current` of the software that ran the test.
    public var softwareVersion: String
    /// The JACK sample rate during the test (nil: unknown).
    public var sampleRate: Double?
    /// The seed of the test's randomness (catch trials and gaps, `HearingTestRandom`).
    public var seed: UInt64
    /// Who took the test, as the starter named them (`/test/start … listener ID`); nil: not given.
    public var listener: String?
    /// The highest level the test could present per frequency (dB HL): a no-response is "not
    /// heard at" this level.
    public var maximumLevels: [Double: Double]
    /// Every presentation, in order.
    public var presentations: [Presentation]

    public init(date: Date, frequencies: [Double], settings: HearingTestSettings, calibration: Double,
                results: [PureToneAudiometry.EarResult], softwareVersion: String = "unknown", sampleRate: Double? = nil,
                seed: UInt64 = 0, listener: String? = nil, maximumLevels: [Double: Double] = [:],
                presentations: [Presentation] = [], calibrationTable: CalibrationTable = CalibrationTable()) {
        self.date = date
        self.frequencies = frequencies
        self.settings = settings
        self.calibration = calibration
        self.results = results
        self.softwareVersion = softwareVersion
        self.sampleRate = sampleRate
        self.seed = seed
        self.listener = listener
        self.maximumLevels = maximumLevels
        self.presentations = presentations
        self.calibrationTable = calibrationTable
    }

    /// Why the result may not become the hearing profile by itself, per tested ear
    /// (`left: unreliable`); empty when every tested ear's `problems` is.
    public var problems: [String] {
        results.flatMap { result in result.problems.map { "\(result.ear.rawValue): \($0)" } }
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
            object.append("problems", .array(result.problems.map { .string($0) }))
            // Every tested point as found: masked or not, no response at a level, or a masking
            // dilemma (no number: the ear's threshold there is unknown).
            object.append("points", .array(result.outcomes.map { point in
                var entry = JSONObject()
                entry.append("hz", .number(point.frequency))
                switch point.outcome {
                case .threshold(let level, let masking):
                    entry.append("outcome", .string("threshold"))
                    entry.append("db_hl", .number(level))
                    entry.append("masking_db_em", masking.map { .number($0) } ?? .null)
                case .noResponse(let level, let masking):
                    entry.append("outcome", .string("no_response"))
                    entry.append("db_hl", .number(level))
                    entry.append("masking_db_em", masking.map { .number($0) } ?? .null)
                case .maskingDilemma:
                    entry.append("outcome", .string("masking_dilemma"))
                }
                return .object(entry)
            }))
            object.append("masking_not_done_hz", .array(result.maskingNotDone.map { .number($0) }))
            return .object(object)
        }
        let trials: [JSONValue] = presentations.map { trial in
            .object(JSONObject([
                "time": .string(Self.isoDate(trial.time)), "ear": .string(trial.ear.rawValue), "hz": .number(trial.frequency),
                "db_hl": trial.level.map { .number($0) } ?? .null, "dbfs": trial.fullScaleLevel.map { .number($0) } ?? .null,
                "catch_trial": .bool(trial.isCatchTrial), "masking_db_em": trial.maskingLevel.map { .number($0) } ?? .null,
                "retest": .bool(trial.isRetest), "response": .string(trial.heard ? "heard" : "none"),
                "latency_s": trial.latency.map { .number($0) } ?? .null,
            ]))
        }
        return .object(JSONObject([
            "version": .number(Self.formatVersion),
            "date": .string(Self.isoDate(date)),
            "software_version": .string(softwareVersion),
            "sample_rate_hz": sampleRate.map { .number($0) } ?? .null,
            // A string: a 64-bit seed does not survive a JSON number read as a double.
            "seed": .string(String(seed)),
            "listener_id": listener.map { .string($0) } ?? .null,
            "frequencies_hz": .array(frequencies.map { .number($0) }),
            "settings": .object(JSONObject([
                "tone_seconds": .number(timing.toneSeconds), "window_start": .number(timing.windowStart),
                "window_end": .number(timing.windowEnd), "gap_min": .number(timing.gapMinimum),
                "gap_max": .number(timing.gapMaximum), "stimulus": .string(settings.isPulsed ? "pulsed" : "steady"),
                "max_db_hl": .number(settings.maximumLevel), "earphone": .string(settings.earphone.name),
                "calibration_db_spl": .number(calibration),
            ])),
            "calibration_corrections_db": .object(JSONObject(Ear.allCases.map { ear in
                JSONObject.Member(key: ear.rawValue, value: .array(calibrationTable.points(ear).map {
                    .object(JSONObject(["hz": .number($0.frequency), "db": .number($0.correction)]))
                }))
            })),
            // The reference levels in force: the earphone table's RETSPL (dB SPL at 0 dB HL).
            "reference_levels": .object(JSONObject([
                "earphone": .string(settings.earphone.name),
                "retspl_db_spl": .array(settings.earphone.entries.map {
                    .object(JSONObject(["hz": .number($0.frequency), "db_spl": .number($0.retspl)]))
                }),
            ])),
            "maximum_db_hl": .array(maximumLevels.sorted { $0.key < $1.key }.map {
                .object(JSONObject(["hz": .number($0.key), "db_hl": .number($0.value)]))
            }),
            "ears": .array(ears),
            "trials": .array(trials),
        ]))
    }

    /// The record as a file.
    public func encoded() -> Data { json.fileData() }
}
