import SoundFitDSP
import SoundFitJSON
import SoundFitModel
import SoundFitRuntime
import SoundFitWeb

extension SoundFitApplication {
    /// The HTTP routes of the web server, besides the OSCQuery namespace (which answers every
    /// path no route takes): the web page under `/ui` when its folder is known, and the chain's
    /// response at `/response`. A module that serves HTTP adds its routes here.
    static func webRoutes(configuration: SoundFitConfiguration, runtime: SoundFitRuntime) -> [HTTPRoute] {
        var routes: [HTTPRoute] = [responseRoute(runtime: runtime)]
        if let page = configuration.web?.pageDirectory {
            routes.append(StaticFiles(root: page).route)
        }
        return routes
    }

    /// `GET /response[?points=N]` → `{"frequencies": [Hz…], "left": [dB…], "right": [dB…]}`, the
    /// same computation as OSC's `/response` (N within `ChainResponse.pointRange`, default
    /// `ChainResponse.defaultPoints`); a bad `points` is 400, no running audio 503, with a reason.
    static func responseRoute(runtime: SoundFitRuntime) -> HTTPRoute {
        HTTPRoute(.exact("/response")) { request in
            var points = ChainResponse.defaultPoints
            for item in request.queryItems {
                guard item.name == "points" else {
                    return .error(.badRequest, "unknown query '\(item.name)': /response takes only points=N")
                }
                guard let count = Int(item.value), ChainResponse.pointRange.contains(count) else {
                    return .error(.badRequest, "points must be an integer in "
                                  + "\(ChainResponse.pointRange.lowerBound)…\(ChainResponse.pointRange.upperBound), got '\(item.value)'")
                }
                points = count
            }
            do {
                let response = try await runtime.currentResponse(points: points)
                return .json(.object(JSONObject([
                    "frequencies": .array(response.frequencies.map { .number($0) }),
                    "left": .array(response.left.map { .number($0) }),
                    "right": .array(response.right.map { .number($0) }),
                ])))
            } catch {
                return .error(.serviceUnavailable, "\(error)")
            }
        }
    }
}
