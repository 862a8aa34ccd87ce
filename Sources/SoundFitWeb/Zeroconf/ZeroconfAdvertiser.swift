import Foundation
import Logging
import Synchronization

/// Advertises SoundFit through Avahi (zeroconf): `_oscjson._tcp` on the HTTP port (OSCQuery
/// clients find the namespace) and `_osc._udp` on the OSC port. One supervised
/// `avahi-publish-service` child (Debian `avahi-utils`) per service, ended with SoundFit (and by
/// the kernel if SoundFit dies, through `setpriv --pdeathsig`). When the tool is missing or no
/// Avahi daemon runs, it logs that once and SoundFit carries on unadvertised.
///
/// Thread rules: `start` and `stop` from any thread except the JACK process callback.
public final class ZeroconfAdvertiser: Sendable {
    /// One advertised service: `_oscjson._tcp` and its port.
    public struct Service: Sendable {
        public var type: String
        public var port: UInt16

        public init(type: String, port: UInt16) {
            self.type = type
            self.port = port
        }
    }

    private let name: String
    private let services: [Service]
    private let logger: Logger
    private let children = Mutex<[Process]>([])
    private let reportedFailure = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    static let tool = "avahi-publish-service"

    public init(name: String, services: [Service], logger: Logger) {
        self.name = name
        self.services = services
        self.logger = logger
    }

    /// Starts one publisher per service.
    public func start() {
        guard let tool = Self.findTool() else {
            logger.notice("zeroconf: \(Self.tool) not found (Debian package avahi-utils); SoundFit is not advertised")
            return
        }
        for service in services {
            let process = Process()
            let setpriv = "/usr/bin/setpriv"
            let arguments = ["-s", name, service.type, String(service.port)]
            if FileManager.default.isExecutableFile(atPath: setpriv) {
                process.executableURL = URL(fileURLWithPath: setpriv)
                process.arguments = ["--pdeathsig", "TERM", "--", tool] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = arguments
            }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            // The read end is closed here, once the child's output was read: nothing else closes
            // it (the pipe outlived every stop, two descriptors per NSM switch), and the handler
            // lets go of itself so the process and its pipe can go.
            process.terminationHandler = { [self] ended in
                let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                try? errors.fileHandleForReading.close()
                ended.terminationHandler = nil
                finished(service, status: ended.terminationStatus, output: output)
            }
            do {
                try process.run()
                children.withLock { $0.append(process) }
                logger.info("zeroconf: advertising \(service.type) on port \(service.port) as '\(name)'")
            } catch {
                try? errors.fileHandleForReading.close()
                try? errors.fileHandleForWriting.close()
                reportOnce("zeroconf: \(tool) could not start (\(error)); SoundFit is not advertised")
            }
        }
    }

    /// Ends every publisher (the services are withdrawn).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        let running = children.withLock { children in
            defer { children = [] }
            return children
        }
        for process in running where process.isRunning { process.terminate() }
    }

    /// A publisher ended before `stop`: no daemon, most likely. Logged once.
    private func finished(_ service: Service, status: Int32, output: String) {
        guard !stopping.load(ordering: .relaxed) else { return }
        let reason = output.trimmingCharacters(in: .whitespacesAndNewlines)
        reportOnce("zeroconf: \(service.type) not advertised: \(reason.isEmpty ? "\(Self.tool) exited with \(status)" : reason) "
            + "(is avahi-daemon running?); SoundFit carries on without it")
    }

    private func reportOnce(_ line: String) {
        guard !reportedFailure.exchange(true, ordering: .relaxed) else { return }
        logger.notice("\(line)")
    }

    private static func findTool() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
