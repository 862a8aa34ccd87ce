import SoundFitRuntime
import SoundFitWeb

extension SoundFitApplication {
    /// The HTTP routes of the web server, besides the OSCQuery namespace (which answers every
    /// path no route takes): the web page under `/ui` when its folder is known, and the chain's
    /// response at `/response`. A module that serves HTTP adds its routes here.
    static func webRoutes(configuration: SoundFitConfiguration, runtime: SoundFitRuntime) -> [HTTPRoute] {
        var routes: [HTTPRoute] = [ResponseRoute.route(runtime: runtime)]
        if let page = configuration.web?.pageDirectory {
            routes.append(StaticFiles(root: page).route)
        }
        return routes
    }
}
