import SoundFitDSP
import SoundFitJSON
import SoundFitModel
import SoundFitRuntime

/// `GET /response[?points=N]`: the chain's magnitude response per ear as it runs now (see
/// `ChainResponse` and the OSC command `/response`), as JSON:
/// `{"sampleRate": 48000, "points": 128, "frequencies": [Hz…], "left": [dB…], "right": [dB…],
/// "stages": {"personalization": "included", "filter": "bypassed", "ringmod": "excluded", "output": "included"}}`.
/// `points` is 16…1024 (default 128); anything else is a 400 with the reason, no audio a 503.
public enum ResponseRoute {
    public static func route(runtime: SoundFitRuntime) -> HTTPRoute {
        HTTPRoute(.exact("/response")) { request in
            var points = ChainResponse.defaultPoints
            for item in request.queryItems {
                guard item.name == "points" else {
                    return .error(.badRequest, "unknown query parameter \"\(item.name)\" (expected points)")
                }
                guard let value = Int(item.value), ChainResponse.pointRange.contains(value) else {
                    return .error(.badRequest, "points: expects an integer in \(ChainResponse.pointRange.lowerBound)…"
                                  + "\(ChainResponse.pointRange.upperBound), got \"\(item.value)\"")
                }
                points = value
            }
            do throws(ControlError) {
                return .json(json(try await runtime.currentResponse(points: points)))
            } catch {
                return .error(.serviceUnavailable, error.description)
            }
        }
    }

    /// The JSON document of `response`.
    public static func json(_ response: ChainResponse) -> JSONValue {
        func numbers(_ values: [Double]) -> JSONValue { .array(values.map { JSONValue.number($0) }) }
        return .object(JSONObject([
            "sampleRate": .number(response.sampleRate),
            "points": .number(response.frequencies.count),
            "frequencies": numbers(response.frequencies),
            "left": numbers(response.left),
            "right": numbers(response.right),
            "stages": .object(JSONObject([
                "personalization": .string(response.personalization.rawValue),
                "filter": .string(response.filter.rawValue),
                "ringmod": .string(response.ringModulator.rawValue),
                "output": .string(response.outputGain.rawValue),
            ])),
        ]))
    }
}
