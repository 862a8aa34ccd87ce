import Foundation
import Testing

extension SoundFitIntegration {
    /// Everything the README and docs/ tell a newcomer to type, typed: `Tests/Scripts/readme_commands.py`
    /// runs each file's shell blocks in order, in one shell per file, against the real `soundfit`
    /// (which starts its own private dummy-backend server, as on a fresh machine) in private
    /// network, /dev/shm and PID namespaces. Blocks that cannot run here are marked with the reason.
    /// docs/OSC.md is generated; `OSCDocumentationTests` checks its examples.
    @Suite("README commands") struct ReadmeCommands {
        static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        static let runner = checkout.appendingPathComponent("Tests/Scripts/readme_commands.py").path

        /// Runs the runner on `markdown` (default: README.md and docs/*.md); returns its exit status and output.
        static func run(markdown: String? = nil) throws -> (status: Int32, output: String) {
            var arguments = [runner, "--soundfit", try SoundFitBinary.path(), "--checkout", checkout.path]
            if let markdown { arguments += ["--markdown", markdown] }
            let process = try ChildProcess(label: "readme_commands.py", executable: "/usr/bin/python3", arguments: arguments)
            guard process.waitForExit(timeout: .seconds(1800)) else {
                process.stop()
                throw IntegrationError("readme_commands.py did not end: \(process.standardOutput)")
            }
            return (process.termination?.status ?? -1, process.standardOutput + process.standardError)
        }

        @Test("Every unmarked shell block of the README and docs/ runs and succeeds; their JSON examples parse; the sample ready line is the one SoundFit prints")
        func everyDocumentedCommandRuns() throws {
            let (status, output) = try Self.run()
            print(output)
            #expect(status == 0, "\(output)")
            let lines = output.split(separator: "\n")
            let ran = lines.first { $0.hasPrefix("blocks run: ") }.flatMap { Int($0.dropFirst("blocks run: ".count)) }
            #expect((ran ?? 0) >= 20, "blocks run: \(String(describing: ran))")
            // Every hand-written page was run, the README first.
            let docs = try FileManager.default.contentsOfDirectory(atPath: Self.checkout.appendingPathComponent("docs").path)
                .filter { $0.hasSuffix(".md") && $0 != "OSC.md" }.sorted().map { "docs/\($0)" }
            let files = lines.first { $0.hasPrefix("files run: ") }.map { $0.dropFirst("files run: ".count).split(separator: " ").map(String.init) }
            #expect(files == ["README.md"] + docs, "\(String(describing: files))")
            for page in ["README.md", "docs/running.md", "docs/osc-guide.md", "docs/hearing.md", "docs/rendering.md", "docs/midi.md"] {
                let count = lines.first { $0.hasPrefix("blocks run in \(page): ") }
                    .flatMap { Int($0.dropFirst("blocks run in \(page): ".count)) }
                #expect((count ?? 0) > 0, "\(page): blocks run \(String(describing: count))")
            }
        }

        @Test("The runner fails a failing block, names it, and runs nothing after it; a bad marker and invalid JSON are errors")
        func theRunnerCanFail() throws {
            let directory = try UniqueName.temporaryDirectory("sf-readme")
            defer { try? FileManager.default.removeItem(at: directory) }
            let failing = directory.appendingPathComponent("failing.md")
            try """
                # Doc
                ```sh
                echo first
                ```

                ```sh
                jack_lsp        # no server: fails
                ```

                ```sh
                echo never
                ```

                ```json
                {"right": [...]}
                ```
                """.write(to: failing, atomically: true, encoding: .utf8)
            let (status, output) = try Self.run(markdown: failing.path)
            #expect(status == 1, "\(output)")
            #expect(output.contains("ok       failing.md:2 ```sh"), "\(output)")
            #expect(output.contains("FAILED   failing.md:6 ```sh"), "\(output)")
            #expect(output.contains("NOT RUN  failing.md:10 ```sh") && !output.contains("\nnever"), "\(output)")
            #expect(output.contains("failing.md:14 ```json: not valid JSON"), "\(output)")

            let badMarker = directory.appendingPathComponent("marker.md")
            try "<!-- docs-test: skip -->\n```sh\ntrue\n```\n".write(to: badMarker, atomically: true, encoding: .utf8)
            let marker = try Self.run(markdown: badMarker.path)
            #expect(marker.status == 2 && marker.output.contains("needs a reason"), "\(marker.output)")
        }
    }
}
