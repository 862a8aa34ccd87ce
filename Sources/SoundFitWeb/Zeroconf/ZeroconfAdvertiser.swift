import Foundation
import Glibc
import Logging
import Synchronization

/// Advertises SoundFit through Avahi (zeroconf): `_oscjson._tcp` on the HTTP port (OSCQuery
/// clients find the namespace) and `_osc._udp` on the OSC port, at the address SoundFit listens
/// on and no other. A service points at a host name, and avahi publishes the machine's with every
/// interface's address, so SoundFit publishes a host name of its own (`soundfit-NAME-MACHINE.local`,
/// see `hostLabel`) with its one listening address, and its services on it. Listening on
/// `0.0.0.0` every interface answers: then the services point at the machine's host name.
///
/// One supervised `avahi-publish -f` child (Debian `avahi-utils`) per record: it waits for
/// avahi-daemon and registers again when the daemon comes back. Each child's lines become one log
/// line per event. Children end with `stop`, and with SoundFit (`setpriv --pdeathsig`). Without
/// the tool or a D-Bus system bus SoundFit says so once and carries on unadvertised.
///
/// Thread rules: `start` and `stop` from any thread except the JACK process callback; each
/// child's output is read on a thread of its own.
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

    /// What one child publishes: SoundFit's host name, or a service.
    private enum Record: Sendable {
        case host(String)
        case service(Service)
    }

    /// One running `avahi-publish`; `retired` once SoundFit ended it for another.
    private final class Publisher: Sendable {
        let record: Record
        let process: Process
        let retired = Atomic<Bool>(false)

        init(record: Record, process: Process) {
            self.record = record
            self.process = process
        }

        /// SIGKILL: a child inherits SoundFit's signal mask, where SIGTERM and SIGINT are
        /// blocked. avahi-daemon withdraws a client's records when its D-Bus connection closes.
        func end() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// What avahi-daemon was last seen doing, so that its coming and going is logged once, not
    /// once per child.
    private enum Daemon {
        case unknown, running, notStarted, gone
    }

    private struct State {
        var publishers: [Publisher] = []
        var stopping = false
        var daemon = Daemon.unknown
        /// SoundFit's host name now (avahi renames it on a collision).
        var hostName: String?
        /// The machine's mDNS host name, as avahi-daemon reported it.
        var machineHostName: String?
        var reportedFailure = false
    }

    private let name: String
    private let address: String
    private let services: [Service]
    private let logger: Logger
    private let state: Mutex<State>
    static let tool = "avahi-publish"

    /// `address` is the IPv4 address SoundFit listens on (OSC and HTTP share it); `name` the
    /// services' name, and `clientName` the JACK client name its host name is made of.
    public init(name: String, clientName: String, address: String, services: [Service], logger: Logger) {
        self.name = name
        self.address = address
        self.services = services
        self.logger = logger
        state = Mutex(State(hostName: address == "0.0.0.0" ? nil : Self.hostName(clientName: clientName)))
    }

    /// SoundFit's host name for the JACK client name `clientName`, before any collision: what
    /// it publishes, and what the HTTP port accepts as `Host`.
    public static func hostName(clientName: String) -> String {
        hostLabel(name: clientName, machine: machineHostName()) + ".local"
    }

    /// The machine's host name as avahi publishes it by default, `MACHINE.local`: what the
    /// services point at on `0.0.0.0`, and what the HTTP port then accepts as `Host`.
    public static var machineLocalHostName: String? {
        let machine = machineHostName().split(separator: ".").first.map(String.init) ?? ""
        return machine.isEmpty ? nil : machine.lowercased() + ".local"
    }

    /// A DNS label unique per instance: `soundfit-NAME-MACHINE` (no second `soundfit` when the
    /// name starts with it), lower case letters, digits and single hyphens, at most 63 bytes.
    public static func hostLabel(name: String, machine: String) -> String {
        func sanitised(_ text: some StringProtocol) -> String {
            var label = ""
            for character in text.lowercased().unicodeScalars {
                if ("a"..."z").contains(character) || ("0"..."9").contains(character) {
                    label.unicodeScalars.append(character)
                } else if !label.isEmpty, !label.hasSuffix("-") {
                    label += "-"
                }
            }
            while label.hasSuffix("-") { label.removeLast() }
            return label
        }
        let name = sanitised(name)
        let machine = sanitised(machine.split(separator: ".").first ?? "")
        let parts = (name.hasPrefix("soundfit") ? [] : ["soundfit"]) + [name, machine].filter { !$0.isEmpty }
        var label = String(parts.joined(separator: "-").prefix(63))
        while label.hasSuffix("-") { label.removeLast() }
        return label
    }

    /// Starts the host name's publisher (unless on `0.0.0.0`) and one per service.
    public func start() {
        guard let tool = Self.findTool() else {
            logger.notice("zeroconf: \(Self.tool) not found (Debian package avahi-utils); SoundFit is not advertised")
            return
        }
        let hostName = state.withLock { $0.hostName }
        if let hostName { launch(.host(hostName), tool: tool) }
        for service in services { launch(.service(service), tool: tool) }
    }

    /// Ends every publisher (avahi withdraws their records).
    public func stop() {
        let running = state.withLock { state in
            state.stopping = true
            defer { state.publishers = [] }
            return state.publishers
        }
        for publisher in running { publisher.end() }
    }

    /// Each child is started by the thread that reads it: the kernel sends the parent-death
    /// signal when the *thread* that started a child ends, and this one ends after its child.
    private func launch(_ record: Record, tool: String) {
        let thread = Thread { [self] in publish(record, tool: tool) }
        thread.name = "zeroconf \(Self.describe(record))"
        thread.start()
    }

    private func publish(_ record: Record, tool: String) {
        let process = Process()
        let setpriv = "/usr/bin/setpriv"
        var arguments = ["-f", "-v"]
        switch record {
        case .host(let hostName):
            arguments += ["-a", "-R", hostName, address]
        case .service(let service):
            let hostName = state.withLock { $0.hostName }
            arguments += ["-s"] + (hostName.map { ["-H", $0] } ?? []) + [name, service.type, String(service.port)]
        }
        if FileManager.default.isExecutableFile(atPath: setpriv) {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--pdeathsig", "KILL", "--", tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        }
        // Its messages are parsed: untranslated.
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        environment["LANGUAGE"] = nil
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let lines = Pipe()
        process.standardError = lines
        let publisher = Publisher(record: record, process: process)
        // Under the lock: a `stop` that ran first is never outlived by a child started after it.
        let refusal: String? = state.withLock { state in
            guard !state.stopping else { return "" }
            do {
                try process.run()
            } catch {
                return "zeroconf: \(Self.tool) could not start (\(error)); SoundFit is not advertised"
            }
            state.publishers.append(publisher)
            return nil
        }
        // Once run, the child holds the pipe's write end (Process closed SoundFit's copy).
        if let refusal {
            try? lines.fileHandleForReading.close()
            try? lines.fileHandleForWriting.close()
            if !refusal.isEmpty { reportOnce(refusal) }
            return
        }
        read(lines.fileHandleForReading, of: publisher)
    }

    /// The child's lines until it ends; closes the pipe.
    private func read(_ output: FileHandle, of publisher: Publisher) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        var lastFailure: String?
        while true {
            let count = Glibc.read(output.fileDescriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending += chunk[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                guard let event = AvahiPublishLine(line) else {
                    if !line.isEmpty { logger.debug("zeroconf: \(Self.tool): \(line)") }
                    continue
                }
                if case .failed(let reason) = event { lastFailure = reason }
                handle(event, from: publisher)
            }
        }
        try? output.close()
        ended(publisher, lastFailure: lastFailure)
    }

    private func handle(_ event: AvahiPublishLine, from publisher: Publisher) {
        guard !publisher.retired.load(ordering: .relaxed) else { return }
        var lines: [String] = []
        var restart = false
        state.withLock { state in
            guard !state.stopping else { return }
            switch event {
            case .server(let hostName):
                state.machineHostName = hostName
                if state.daemon == .unknown { state.daemon = .running }
            case .daemonAbsent:
                switch state.daemon {
                case .unknown:
                    lines.append("zeroconf: avahi-daemon is not running; SoundFit is advertised when it starts")
                    state.daemon = .notStarted
                case .running:
                    lines.append("zeroconf: avahi-daemon went away; SoundFit re-advertises when it returns")
                    state.daemon = .gone
                case .notStarted, .gone:
                    break
                }
            case .established(let established):
                if state.daemon == .gone { lines.append("zeroconf: avahi-daemon is back; SoundFit is advertised again") }
                state.daemon = .running
                if case .service(let service) = publisher.record {
                    let at = state.hostName.map { "\($0) (\(address))" }
                        ?? "\(state.machineHostName ?? "the machine's host name") (every interface's address: SoundFit listens on 0.0.0.0)"
                    lines.append("zeroconf: advertising \(service.type) on port \(service.port) as '\(established)' at \(at)")
                }
            case .collision(let newName):
                switch publisher.record {
                case .service(let service):
                    lines.append("zeroconf: another \(service.type) on the network has SoundFit's name; advertising it as '\(newName)'")
                case .host(let hostName):
                    // avahi-publish's own pick for a `.local` name is no host name ('(null)').
                    let alternative = Self.alternative(to: hostName)
                    lines.append("zeroconf: the host name \(hostName) is taken on the network (avahi offered '\(newName)'); "
                        + "SoundFit moves to \(alternative)")
                    state.hostName = alternative
                    restart = true
                }
            case .failed:
                break
            }
        }
        for line in lines { logger.notice("\(line)") }
        if restart { republish() }
    }

    /// SoundFit's host name changed: every record is published again, on the new one.
    private func republish() {
        guard let tool = Self.findTool() else { return }
        let (old, hostName) = state.withLock { state in
            defer { state.publishers = [] }
            return (state.publishers, state.hostName)
        }
        for publisher in old {
            publisher.retired.store(true, ordering: .relaxed)
            publisher.end()
        }
        if let hostName { launch(.host(hostName), tool: tool) }
        for service in services { launch(.service(service), tool: tool) }
    }

    /// The next host name after a collision: `NAME-2.local`, then `NAME-3.local`…
    public static func alternative(to hostName: String) -> String {
        let label = hostName.hasSuffix(".local") ? String(hostName.dropLast(".local".count)) : hostName
        var stem = label, number = 2
        if let dash = label.lastIndex(of: "-"), let last = Int(label[label.index(after: dash)...]), last >= 2,
           label[label.index(after: dash)...].allSatisfy(\.isASCII) {
            stem = String(label[..<dash])
            number = last + 1
        }
        let suffix = "-\(number)"
        return String(stem.prefix(63 - suffix.count)) + suffix + ".local"
    }

    /// A publisher ended before `stop`: no D-Bus system bus (avahi-daemon needs one), or a name
    /// another SoundFit on this machine has. Logged once.
    private func ended(_ publisher: Publisher, lastFailure: String?) {
        guard !publisher.retired.load(ordering: .relaxed), !state.withLock({ $0.stopping }) else { return }
        state.withLock { $0.publishers.removeAll { $0 === publisher } }
        let reason = lastFailure ?? "\(Self.tool) ended"
        let hint = reason.contains("Local name collision")
            ? "another SoundFit on this machine is named '\(name)': give this one another --name"
            : reason.contains("Daemon not running") ? "is the D-Bus system bus running?" : nil
        reportOnce("zeroconf: \(Self.describe(publisher.record)) not advertised: \(reason)\(hint.map { " (\($0))" } ?? ""); "
            + "SoundFit carries on without it")
    }

    private func reportOnce(_ line: String) {
        guard !state.withLock({ state in defer { state.reportedFailure = true }; return state.reportedFailure }) else { return }
        logger.notice("\(line)")
    }

    private static func describe(_ record: Record) -> String {
        switch record {
        case .host(let hostName): "host name \(hostName)"
        case .service(let service): service.type
        }
    }

    private static func machineHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
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
