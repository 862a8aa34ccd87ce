import Foundation
import Glibc
import Testing

extension SoundFitIntegration.NSMSession {
    /// Sends `/nsm/client/open` and returns the answer: `/reply` or `/error` for the open.
    private func requestOpen(_ nsm: TestNSMServer, path: String, clientID: String) throws -> OSCTestMessage {
        try nsm.send("/nsm/client/open", .string(path), .string("SoundFit"), .string(clientID))
        return try nsm.waitFor("/reply or /error to the open of \(path)", timeout: .seconds(30)) {
            ($0.address == "/reply" || $0.address == "/error") && $0.string(0) == "/nsm/client/open"
        }.match
    }

    /// The `index`-th ready line (0: the first) the process printed, waiting up to 30 s for it.
    private func readyLine(_ process: ChildProcess, _ index: Int) -> ReadyLine? {
        process.waitForOutput(timeout: .seconds(30)) { output -> ReadyLine? in
            let parts = output.components(separatedBy: "soundfit ready")
            return parts.count > index + 1 ? ReadyLine.find(in: "soundfit ready" + parts[index + 1]) : nil
        }
    }

    /// `/error ,sis /nsm/client/open code message`, with `code` and a message containing `hint`.
    private func expectOpenError(_ answer: OSCTestMessage, code: Int32, _ hint: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.address == "/error" && answer.arguments.count == 3 && answer.string(0) == "/nsm/client/open",
                "\(answer)", sourceLocation: sourceLocation)
        #expect(answer.arguments.count > 1 && answer.arguments[1] == .int(code), "code: \(answer)", sourceLocation: sourceLocation)
        #expect(answer.string(2)?.contains(hint) == true, "'\(hint)' not in \(answer)", sourceLocation: sourceLocation)
    }

    @Test("A switch to a relative or '..' path, a locked directory, unreadable state or a file is refused with /error; the old session keeps running")
    func refusedSwitchesKeepTheSession() throws {
        try Rig.run(.nsm(directory: "nsm-abuse")) { rig in
            let path = rig.root.appendingPathComponent("session/SoundFit.nKEEP")
            let clientID = "SoundFit.nKEEP"

            let ready = try open(rig.nsm, rig.process, path: path, clientID: clientID)
            let osc = try OSCTestClient.inSession(port: ready.oscPort)
            expectApplied(try osc.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))

            // Another SoundFit holds this one's lock.
            let locked = rig.root.appendingPathComponent("session/SoundFit.nLOCKED")
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
            let holder = try SoundFitInstance(server: rig.server, stateDirectory: locked, channels: 1, arguments: ["--name", "holder"])
            defer { holder.stop() }
            // A state file that cannot be read (a directory where state.json belongs).
            let unreadable = rig.root.appendingPathComponent("session/SoundFit.nUNREADABLE")
            try FileManager.default.createDirectory(at: unreadable.appendingPathComponent("state.json"), withIntermediateDirectories: true)
            // A regular file where the directory belongs.
            let file = rig.root.appendingPathComponent("session/SoundFit.nFILE")
            try Data("not a directory".utf8).write(to: file)

            let cwd = FileManager.default.currentDirectoryPath
            let cases: [(path: String, code: Int32, hint: String)] = [
                ("relative-\(UniqueName.make("nsm"))/SoundFit.nREL", -10, "relative"),
                ("\(rig.root.path)/session/../escaped/SoundFit.nDOTS", -10, "'..'"),
                ("\(rig.root.path)/session/./SoundFit.nDOT", -10, "'.'"),
                (locked.path, -11, "in use by another SoundFit"),
                (unreadable.path, -9, "cannot be read"),
                (file.path, -10, "cannot create the state directory"),
            ]
            for (index, refused) in cases.enumerated() {
                let answer = try requestOpen(rig.nsm, path: refused.path, clientID: "SoundFit.nREFUSED\(index)")
                expectOpenError(answer, code: refused.code, refused.hint)
                // Still the same SoundFit: running, its JACK client, its OSC port, its values.
                #expect(rig.process.isRunning, "\(rig.process.standardError)")
                try osc.ping()
                #expect(try osc.query("/filter/cutoff").number == 2500)
            }
            // Nothing was created outside the session's tree, nor for the refused client ids.
            #expect(!FileManager.default.fileExists(atPath: rig.root.appendingPathComponent("escaped").path))
            #expect(!FileManager.default.fileExists(atPath: "\(cwd)/\(cases[0].path)"))
            #expect(!FileManager.default.fileExists(atPath: rig.root.appendingPathComponent("session/SoundFit.nDOT").path))
            let ports = try JackTools.run("jack_lsp", server: rig.server.name)
            #expect(ports.contains("\(clientID):input_1") && !ports.contains("SoundFit.nREFUSED"), "\(ports)")
            #expect(rig.process.standardOutput.components(separatedBy: "soundfit ready").count == 2, "one ready line only")
            // The holder was not disturbed either.
            try holder.osc.ping()

            // The session still saves, into its own directory, and still switches to a good path.
            try rig.nsm.send("/nsm/client/save")
            let saved = try rig.nsm.waitFor("/reply to save") { $0.address == "/reply" || $0.address == "/error" }.match
            #expect(saved.address == "/reply" && saved.string(0) == "/nsm/client/save", "\(saved)")
            #expect(savedNumber(path, "/filter/cutoff") == 2500)
            let good = rig.root.appendingPathComponent("session/SoundFit.nGOOD")
            let switched = try requestOpen(rig.nsm, path: good.path + "/", clientID: "SoundFit.nGOOD")
            #expect(switched.address == "/reply", "\(switched); \(rig.process.standardError)")
            let goodReady = try #require(readyLine(rig.process, 1), "no second ready line; \(rig.process.standardError)")
            #expect(goodReady.fields["client"] == "SoundFit.nGOOD")
            #expect(FileManager.default.fileExists(atPath: good.appendingPathComponent("soundfit.lock").path))
        }
    }

    @Test("A switch whose SoundFit cannot start (JACK refuses its client id) is answered with /error; the previous path opens again with its values")
    func failedStartReopensThePrevious() throws {
        let rig = try Rig.start(.nsm(directory: "nsm-fallback"))
        defer { rig.stop() }
        let path = rig.root.appendingPathComponent("SoundFit.nBACK")
        let ready = try open(rig.nsm, rig.process, path: path, clientID: "SoundFit.nBACK")
        let osc = try OSCTestClient.inSession(port: ready.oscPort)
        expectApplied(try osc.set("/filter/cutoff", .float(3100)), "/filter/cutoff", .float(3100))

        // A client id equal to the JACK server's name: the path passes every check, and JACK
        // joining refuses it (before any client is opened) once the old SoundFit has stopped.
        let answer = try requestOpen(rig.nsm, path: rig.root.appendingPathComponent("SoundFit.nNEW").path, clientID: rig.server.name)
        #expect(answer.address == "/error" && answer.arguments.count == 3 && answer.arguments[1] == .int(-1), "\(answer)")
        #expect(answer.string(2)?.contains("SoundFit could not start") == true, "\(answer)")
        // The previous path and client id come back (a ready line, no second answer to the open).
        let back = try #require(readyLine(rig.process, 1), "no ready line after the failed switch; \(rig.process.standardError)")
        #expect(back.fields["client"] == "SoundFit.nBACK")
        #expect(rig.process.isRunning)
        let oscBack = try OSCTestClient.inSession(port: back.oscPort)
        #expect(try oscBack.query("/filter/cutoff").number == 3100)
        #expect(try JackTools.run("jack_lsp", server: rig.server.name).contains("SoundFit.nBACK:input_1"))
        // A second answer would come before the answer to the probe the server sends now.
        #expect(!(try rig.nsm.receivedBeforeProbe()).contains { $0.string(0) == "/nsm/client/open" }, "a second answer to the open")
        // And it is a working session again: it saves.
        try rig.nsm.send("/nsm/client/save")
        let saved = try rig.nsm.waitFor("/reply to save") { ($0.address == "/reply" || $0.address == "/error") && $0.string(0) == "/nsm/client/save" }.match
        #expect(saved.address == "/reply", "\(saved)")

        // An open of the path it runs on (its own lock) reopens it, with its values.
        let same = try requestOpen(rig.nsm, path: path.path, clientID: "SoundFit.nBACK")
        #expect(same.address == "/reply", "\(same); \(rig.process.standardError)")
        let reopened = try #require(readyLine(rig.process, 2), "no ready line after reopening; \(rig.process.standardError)")
        let oscSame = try OSCTestClient.inSession(port: reopened.oscPort)
        #expect(try oscSame.query("/filter/cutoff").number == 3100)
    }

    @Test("A first open with a relative path is refused with /error and exit 1; nothing is written")
    func relativeFirstOpen() throws {
        try Rig.run(.nsm()) { rig in
            let relative = "relative-\(UniqueName.make("nsm"))"
            let answer = try requestOpen(rig.nsm, path: relative, clientID: "SoundFit.nREL")
            expectOpenError(answer, code: -10, "relative")
            #expect(rig.process.waitForExit(timeout: .seconds(15)))
            #expect(rig.process.termination?.status == 1 && rig.process.termination?.bySignal == false, "\(String(describing: rig.process.termination))")
            #expect(rig.process.standardError.contains("is relative"), "\(rig.process.standardError)")
            #expect(!FileManager.default.fileExists(atPath: "\(FileManager.default.currentDirectoryPath)/\(relative)"))
        }
    }

    @Test("20 switches leak no file descriptor: /proc/PID/fd holds the same pipes, sockets and files after as before")
    func switchesLeakNoDescriptors() throws {
        try Rig.run(.nsm(directory: "nsm-fds")) { rig in
            let paths = [rig.root.appendingPathComponent("SoundFit.nFDA"), rig.root.appendingPathComponent("SoundFit.nFDB")]
            _ = try open(rig.nsm, rig.process, path: paths[0], clientID: "SoundFit.nFD0")

            var readyCount = 1
            /// Switches to `paths[n % 2]` and waits until that SoundFit answers OSC with its session.
            func switchTo(_ n: Int) throws {
                var answer = try requestOpen(rig.nsm, path: paths[n % 2].path, clientID: "SoundFit.nFD\(n % 2)")
                if answer.address == "/error", answer.string(2)?.contains("could not start: cannot connect to JACK") == true {
                    // The test's jackd, on a loaded machine, now and then refuses a client right
                    // after closing the previous one (status 0x21). SoundFit then opens the previous
                    // path again (a ready line); the switch is asked for once more. The descriptors
                    // of that path are counted like any other.
                    _ = try #require(readyLine(rig.process, readyCount), "switch \(n): no ready line after the fallback; \(rig.process.standardError)")
                    readyCount += 1
                    print("note: switch \(n): jackd refused the client once; switching again")
                    answer = try requestOpen(rig.nsm, path: paths[n % 2].path, clientID: "SoundFit.nFD\(n % 2)")
                }
                #expect(answer.address == "/reply", "switch \(n): \(answer); \(rig.process.standardError)")
                let ready = try #require(readyLine(rig.process, readyCount), "switch \(n): no ready line; \(rig.process.standardError)")
                readyCount += 1
                _ = try OSCTestClient.inSession(port: ready.oscPort)
            }
            /// The process's descriptors by kind (`pipe`, `socket`, a path, `anon_inode:[eventfd]`…)
            /// and its thread count, read now.
            func snapshot() -> (kinds: [String: Int], count: Int, threads: Int) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(rig.process.pid)/fd")) ?? []
                let targets = names.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(rig.process.pid)/fd/\($0)")) ?? "?" }
                // JACK's metadata files in /dev/shm are shared by every jackd on the machine and
                // replaced now and then: the same descriptor reads "(deleted)" afterwards.
                let kinds = Dictionary(targets.map {
                    ($0.hasPrefix("pipe:") ? "pipe" : $0.hasPrefix("socket:") ? "socket" : $0.replacingOccurrences(of: " (deleted)", with: ""), 1)
                }, uniquingKeysWith: +)
                let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(rig.process.pid)/task").count) ?? 0
                return (kinds, names.count, threads)
            }
            /// The snapshot once the count held still for 1 s (at most 15 s): a SoundFit just
            /// started has its zeroconf helpers' pipes open until they end on their own (at once
            /// without an Avahi daemon); no event announces a closed descriptor, so this polls. A
            /// leak stays open and is counted either way.
            func settled() -> (kinds: [String: Int], count: Int, threads: Int) {
                var current = snapshot()
                var stableReads = 0
                let deadline = ContinuousClock.now + .seconds(15)
                while stableReads < 10, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.1)  // polls a condition (with a deadline)
                    let next = snapshot()
                    stableReads = next.count == current.count ? stableReads + 1 : 0
                    current = next
                }
                return current
            }
            // Two round trips first: whatever a SoundFit opens once per process (and keeps) is open
            // before the count starts.
            for n in 1...4 { try switchTo(n) }
            let before = settled()
            for n in 1...20 { try switchTo(n) }
            let after = settled()
            print("note: /proc/\(rig.process.pid)/fd: \(before.count) entries before 20 switches, \(after.count) after; threads \(before.threads) → \(after.threads)")

            // Every thread that touched Foundation's run loop owns one (eventpoll, eventfd, timerfd)
            // until it ends, and Dispatch's worker threads come and go on idle timers (measured on
            // an idle SoundFit: 40 descriptors and 10 threads, 37 and 8 a few seconds later). Those
            // three kinds may vary, never past one per thread; everything else must be exactly as
            // before.
            let perThread: Set = ["anon_inode:[eventpoll]", "anon_inode:[eventfd]", "anon_inode:[timerfd]"]
            let changed = Set(before.kinds.keys).union(after.kinds.keys).filter { before.kinds[$0] != after.kinds[$0] }.sorted()
            let report = changed.map { "\($0): \(before.kinds[$0] ?? 0) → \(after.kinds[$0] ?? 0)" }.joined(separator: ", ")
            #expect(before.count > 0)
            #expect(changed.allSatisfy(perThread.contains), "changed: \(report)")
            for kind in perThread {
                #expect((after.kinds[kind] ?? 0) <= after.threads, "\(kind): \(report); threads \(before.threads) → \(after.threads)")
            }
            // A SoundFit left behind per switch would leave its threads (JACK, NIO) behind too.
            #expect(after.threads <= before.threads + 4, "threads \(before.threads) → \(after.threads)")
            #expect(rig.process.isRunning)
        }
    }
}
