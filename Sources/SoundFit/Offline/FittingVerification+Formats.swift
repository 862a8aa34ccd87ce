import Foundation
import SoundFitJSON

extension FittingVerification.Report {
    /// The report as CSV, one row per band and level (`speech`) and per tone level (`tone`):
    /// `kind,ear,level_db_spl,centre_hz,target_db,measured_db,tolerance_db,pass`. For speech rows
    /// the target and measured values are insertion gains (dB); for tone rows they are output
    /// levels (dB SPL) at the input level `level_db_spl`, and tolerance and pass are empty.
    public var csv: String {
        var lines = ["kind,ear,level_db_spl,centre_hz,target_db,measured_db,tolerance_db,pass"]
        func number(_ value: Double) -> String { String(format: "%.2f", value) }
        for result in speech {
            for band in result.bands {
                lines.append(["speech", result.ear.rawValue, number(result.level), number(band.centre), number(band.target),
                              number(band.measured), number(band.tolerance), band.passes ? "1" : "0"].joined(separator: ","))
            }
        }
        for curve in tones {
            for (index, input) in curve.inputs.enumerated() where index < curve.measured.count {
                lines.append(["tone", curve.ear.rawValue, number(input), number(curve.centre), number(curve.targets[index]),
                              number(curve.measured[index]), "", ""].joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as JSON (`GET /verify`):
    /// `{"techLevel": 3, "calibration": 100, "intensity": 1, "enabled": true, "loadedVariant": "default",
    /// "passes": false, "failures": ["…"], "speech": [{"ear": "left", "level": 65, "bands": [{"centre": 250,
    /// "target": 7.1, "measured": 7.0, "tolerance": 1, "pass": true}, …]}, …], "tones": [{"ear": "left",
    /// "centre": 250, "inputs": [40, …], "targets": [dB SPL…], "measured": [dB SPL…]}, …],
    /// "prescription": [{"ear": "left", "centres": [Hz…], "prescribed": [dB…], "applied": [dB…]}, …]}`.
    public var json: JSONValue {
        func numbers(_ values: [Double]) -> JSONValue { .array(values.map { JSONValue.number($0) }) }
        func rounded(_ value: Double) -> JSONValue { .number((value * 100).rounded() / 100) }
        return .object(JSONObject([
            "techLevel": .number(techLevel),
            "calibration": .number(calibration),
            "intensity": .number(intensity),
            "enabled": .bool(isEnabled),
            "loadedVariant": loadedVariant.map(JSONValue.string) ?? .null,
            "passes": .bool(passes),
            "failures": .array(failures.map(JSONValue.string)),
            "speech": .array(speech.map { result in
                .object(JSONObject([
                    "ear": .string(result.ear.rawValue),
                    "level": .number(result.level),
                    "bands": .array(result.bands.map { band in
                        .object(JSONObject([
                            "centre": rounded(band.centre), "target": rounded(band.target), "measured": rounded(band.measured),
                            "tolerance": .number(band.tolerance), "pass": .bool(band.passes),
                        ]))
                    }),
                ]))
            }),
            "prescription": .array(prescription.map { curve in
                .object(JSONObject([
                    "ear": .string(curve.ear.rawValue), "centres": .array(curve.centres.map(rounded)),
                    "prescribed": .array(curve.prescribed.map(rounded)), "applied": .array(curve.applied.map(rounded)),
                ]))
            }),
            "tones": .array(tones.map { curve in
                .object(JSONObject([
                    "ear": .string(curve.ear.rawValue), "centre": rounded(curve.centre), "inputs": numbers(curve.inputs),
                    "targets": .array(curve.targets.map(rounded)), "measured": .array(curve.measured.map(rounded)),
                ]))
            }),
        ]))
    }

    /// The table `soundfit verify` prints: per ear and level, a row of band centres, targets,
    /// measured gains and misses, then the verdict.
    public var table: String {
        var lines = ["tech level \(techLevel), calibration \(String(format: "%.0f", calibration)) dB SPL, intensity "
                     + String(format: "%.2f", intensity) + (isEnabled ? "" : ", processing OFF")
                     + ", loaded preset: \(loadedVariant ?? "none") (target: the default preset's prescription)"]
        for result in speech {
            func row(_ title: String, _ values: [String]) -> String {
                title.padding(toLength: 16, withPad: " ", startingAt: 0) + values.map { String(repeating: " ", count: max(0, 8 - $0.count)) + $0 }.joined()
            }
            lines.append("")
            lines.append("\(result.ear.rawValue) ear, speech noise \(String(format: "%.0f", result.level)) dB SPL")
            lines.append(row("band (Hz)", result.bands.map { String(format: "%.0f", $0.centre) }))
            lines.append(row("target (dB)", result.bands.map { String(format: "%.1f", $0.target) }))
            lines.append(row("measured (dB)", result.bands.map { String(format: "%.1f", $0.measured) }))
            lines.append(row("miss (dB)", result.bands.map { String(format: "%+.1f", $0.miss) + ($0.passes ? " " : "!") }))
        }
        lines.append("")
        if passes {
            lines.append("PASS: every band within its tolerance (1 dB to 4 kHz, 2 dB to 6 kHz)")
        } else {
            lines.append("FAIL: \(failures.count) band(s) outside tolerance:")
            lines += failures.map { "  " + $0 }
            for ear in earsHeldByTheLimit {
                lines.append("  the output limit (\(String(format: "%.1f", outputLimit)) dB SPL, --max-output) is below the "
                             + "\(ear.rawValue) ear's derived maximum output (\(String(format: "%.1f", derivedMaximumOutput[ear]!)) dB SPL): "
                             + "it holds loud speech down; raise --max-output to deliver the prescription")
            }
        }
        if speech.contains(where: { $0.bands.contains { !$0.tolerance.isFinite } }) {
            lines.append("(bands above 6 kHz are measured, not judged: NAL-RP ends at 6 kHz)")
        }
        return lines.joined(separator: "\n")
    }
}
