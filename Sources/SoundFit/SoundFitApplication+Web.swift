import Foundation
import SoundFitOSC
import SoundFitRuntime
import SoundFitWeb

extension SoundFitApplication {
    /// The HTTP routes of the web server, besides the OSCQuery namespace (which answers every
    /// path no route takes): the web page under `/ui` when its folder is known, the chain's
    /// response at `/response` and the last hearing test's FHIR export at `/hearing-test/fhir`, the fitting's verification at `/verify`. A module that serves HTTP adds its routes here.
    static func webRoutes(configuration: SoundFitConfiguration, runtime: SoundFitRuntime,
                          hearingTest: HearingTestRunner, stateKeeper: StateKeeper? = nil) -> [HTTPRoute] {
        var routes: [HTTPRoute] = [ResponseRoute.route(runtime: runtime), HearingTestExportRoute.route(runner: hearingTest)]
        routes.append(verifyRoute(runtime: runtime, stateKeeper: stateKeeper))
        if let page = configuration.web?.pageDirectory {
            let files = StaticFiles(root: page)
            routes.append(files.route)
            routes.append(files.faviconRoute)
        }
        return routes
    }

    /// The web surface's page, `http://HOST:PORT/ui/` (the loopback address when the port is
    /// bound to every address; `?token=T` when the port requires one, which the page forwards to
    /// its WebSocket); nil without the HTTP port or a page to serve.
    public var webPage: URL? {
        guard let web, configuration.web?.pageDirectory != nil else { return nil }
        let host = web.boundPeer.host == "0.0.0.0" ? "127.0.0.1" : web.boundPeer.host
        return URL(string: "http://\(host):\(web.boundPeer.port)/ui/" + (web.access.token.map { "?token=\($0)" } ?? ""))
    }

    /// Who may use the HTTP port: loopback names, the OSC host (every interface's address when
    /// it is `0.0.0.0`), the host name zeroconf advertises (SoundFit's own, or the machine's on
    /// `0.0.0.0`) and `--http-allow-host`; `--http-allow-origin`; the token of `--http-token`,
    /// else a random one when the port is exposed beyond loopback.
    static func webAccess(_ osc: SoundFitConfiguration.OSC, _ web: SoundFitConfiguration.Web, clientName: String) -> WebAccess {
        let advertised = osc.host == "0.0.0.0" ? ZeroconfAdvertiser.machineLocalHostName : ZeroconfAdvertiser.hostName(clientName: clientName)
        let hosts = web.allowedHosts + [osc.host] + (osc.host == "0.0.0.0" ? WebAccess.interfaceAddresses() : [])
            + (advertised.map { [$0] } ?? [])
        let token = web.token ?? (osc.exposure == .network ? WebAccess.randomToken() : nil)
        return WebAccess(allowedHosts: hosts, allowedOrigins: web.allowedOrigins, token: token)
    }
}
