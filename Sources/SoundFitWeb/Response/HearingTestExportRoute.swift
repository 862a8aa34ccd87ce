import SoundFitRuntime

/// `GET /hearing-test/fhir`: the last finished hearing test's audiogram as an HL7 FHIR R4
/// Observation (`HearingTestRunner.lastExport`, the same document as OSC `/test/export`), served as
/// `application/fhir+json`; a 404 with the reason before the first test. It passes the server's
/// access checks like every route (`WebAccess`: host, origin, token).
public enum HearingTestExportRoute {
    public static let path = "/hearing-test/fhir"

    public static func route(runner: HearingTestRunner) -> HTTPRoute {
        HTTPRoute(.exact(path)) { request in
            guard request.queryItems.isEmpty else {
                return .error(.badRequest, "\(path) takes no query parameter")
            }
            guard let export = runner.lastExport else {
                return .error(.notFound, "no finished hearing test to export (/test/start one)")
            }
            return HTTPResponse(contentType: "application/fhir+json", body: Array(export.utf8))
        }
    }
}
