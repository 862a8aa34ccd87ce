import Foundation

/// The web page's files, served from one folder under `/ui`: nothing outside it. A path with
/// `..`, a `.`-segment, a backslash, a NUL or an absolute form never reaches the file system;
/// a file whose real location (symbolic links resolved) is outside the folder is not served.
/// `/ui` and `/ui/` are `/ui/index.html`.
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
        HTTPRoute(.prefix(mountPath)) { request in respond(to: request.path) }
    }

    /// The file for a request path under the mount path, or the reason it is refused.
    func respond(to path: String) -> HTTPResponse {
        var relative = String(path.dropFirst(mountPath.count))
        if relative.isEmpty || relative == "/" { relative = "/index.html" }
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
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return .error(.notFound, "no file \(path)")
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
