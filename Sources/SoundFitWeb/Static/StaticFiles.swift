import Foundation

/// The web page's files, served from one folder under `/ui`: nothing outside it. A path with
/// `..`, a `.`-segment, a backslash, a NUL or an absolute form never reaches the file system;
/// a file whose real location (symbolic links resolved) is outside the folder is not served.
/// A directory's URL is its `index.html`; without its closing slash it is redirected (301) to
/// the URL with it (`/ui` → `/ui/`), so the page's relative URLs resolve inside the folder.
/// `/favicon.ico` (`faviconRoute`) is redirected to the folder's `favicon.svg`.
///
/// Thread rules: any thread; reads the disk (call it off the event loop: routes run in tasks).
public struct StaticFiles: Sendable {
    /// The folder, its symbolic links resolved.
    public let root: URL
    /// Where the files are served (`/ui`).
    public let mountPath: String
    /// Files larger than this are not served (413): the folder is the page, not a media library.
    public static let maximumFileBytes = 16 * 1024 * 1024

    public init(root: URL, mountPath: String = "/ui") {
        self.root = root.resolvingSymlinksInPath().standardizedFileURL
        self.mountPath = mountPath
    }

    /// The route that serves the folder.
    public var route: HTTPRoute {
        HTTPRoute(.prefix(mountPath)) { request in respond(to: request.path, query: request.receivedQuery) }
    }

    /// `/favicon.ico`, where browsers look for a site's icon: redirected to the page's icon.
    public var faviconRoute: HTTPRoute {
        HTTPRoute(.exact("/favicon.ico")) { _ in Self.redirect(to: mountPath + "/favicon.svg") }
    }

    /// A permanent redirect (301) to `path` on this server, `query` (undecoded, as received)
    /// kept. The path is percent-encoded again: a decoded CR or LF never reaches the header.
    static func redirect(to path: String, query: String? = nil) -> HTTPResponse {
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "/"
        let location = encoded + (query.map { "?" + $0 } ?? "")
        return HTTPResponse(status: .movedPermanently, contentType: "text/plain; charset=utf-8",
                            body: Array("see \(location)\n".utf8), headers: [("Location", location)])
    }

    /// The file for a request path under the mount path, or the reason it is refused; a
    /// directory's URL without its closing slash is redirected to the one with it (`query` kept).
    func respond(to path: String, query: String? = nil) -> HTTPResponse {
        var relative = String(path.dropFirst(mountPath.count))
        if relative.isEmpty { return Self.redirect(to: path + "/", query: query) }
        if relative.hasSuffix("/") { relative += "index.html" }
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.hasPrefix(".") }),
              !relative.contains("\\"), !relative.contains("\0") else {
            return .error(.forbidden, "\(path): only plain file names below \(mountPath)/ are served (no '..', '.', hidden or empty segments)")
        }
        let file = root.appendingPathComponent(segments.joined(separator: "/")).resolvingSymlinksInPath().standardizedFileURL
        guard file.path.hasPrefix(root.path + "/") else {
            return .error(.forbidden, "\(path) leads outside the page's folder")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory) else {
            return .error(.notFound, "no file \(path)")
        }
        if isDirectory.boolValue {
            return Self.redirect(to: path + "/", query: query)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        guard size <= Self.maximumFileBytes else {
            return .error(.payloadTooLarge, "\(path) is larger than \(Self.maximumFileBytes) bytes")
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            return .error(.forbidden, "\(path) cannot be read")
        }
        return HTTPResponse(contentType: Self.contentType(of: file.pathExtension), body: Array(data),
                            headers: [("Cache-Control", "no-cache")])
    }

    /// The content type for a file extension; unknown ones are `application/octet-stream`.
    static func contentType(of pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "html", "htm": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "ico": "image/x-icon"
        case "txt": "text/plain; charset=utf-8"
        case "woff2": "font/woff2"
        case "wasm": "application/wasm"
        default: "application/octet-stream"
        }
    }
}
