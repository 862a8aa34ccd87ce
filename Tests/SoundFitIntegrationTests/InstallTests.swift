import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// `scripts/install.sh` into a temporary prefix, and the installed binary used like a system
    /// tool: from another directory, with an empty environment.
    @Suite("Install") struct Install {
        /// The checkout this test belongs to.
        static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()

        /// Runs `command` through `env -i -C /`: no environment variables but a plain PATH, in `/`.
        static func runClean(_ command: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runToEnd("/usr/bin/env", ["-i", "-C", "/", "PATH=/usr/bin:/bin"] + command)
        }

        @Test("install.sh installs binary, factory patches, man page, completions and a user unit that work from anywhere")
        func installIntoPrefix() throws {
            let prefix = try UniqueName.temporaryDirectory("soundfit-prefix")
            defer { try? FileManager.default.removeItem(at: prefix) }
            let installed = try runToEnd(Self.checkout.appendingPathComponent("scripts/install.sh").path,
                                         ["--binary", try SoundFitBinary.path(), prefix.path])
            #expect(installed.status == 0, "install.sh: \(installed.stderr)")
            let binary = prefix.appendingPathComponent("bin/soundfit").path

            // Factory patches found next to the installed binary, with no variable and no checkout.
            let patches = try Self.runClean([binary, "patches"])
            #expect(patches.status == 0, "\(patches.stderr)")
            #expect(patches.stdout.contains("0\tTransparent") && patches.stdout.contains("2\tLowpass 1 kHz"), "\(patches.stdout)")
            #expect(!patches.stderr.contains("no factory patches found"), "\(patches.stderr)")
            let factoryFiles = try FileManager.default.contentsOfDirectory(
                atPath: Self.checkout.appendingPathComponent("patches").path).filter { $0.hasSuffix(".json") }
            #expect(patches.stdout.split(separator: "\n").count(where: { !$0.hasPrefix("-") }) == factoryFiles.count)

            // The man page renders and names every subcommand and every option of each.
            let manual = prefix.appendingPathComponent("share/man/man1/soundfit.1").path
            let rendered = try runToEnd("/usr/bin/env", ["MANWIDTH=250", "man", "-l", manual])
            #expect(rendered.status == 0, "man -l: \(rendered.stderr)")
            let help = try runToEnd(binary, ["--experimental-dump-help"])
            let tool = try JSONSerialization.jsonObject(with: Data(help.stdout.utf8)) as? [String: Any]
            var missing: [String] = []
            func check(_ command: [String: Any], path: [String]) {
                for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
                    for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                        let option = "--" + (name["name"] as? String ?? "")
                        if !rendered.stdout.contains(option) { missing.append("\(path.joined(separator: " ")) \(option)") }
                    }
                }
                for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                    let name = sub["commandName"] as? String ?? ""
                    if !rendered.stdout.contains((path + [name]).joined(separator: " ")) {
                        missing.append((path + [name]).joined(separator: " "))
                    }
                    check(sub, path: path + [name])
                }
            }
            if let command = tool?["command"] as? [String: Any] { check(command, path: ["soundfit"]) }
            #expect(tool != nil && missing.isEmpty, "missing from the man page: \(missing)")
            #expect(rendered.stdout.contains("render") && rendered.stdout.contains("--set"))

            // Completions load in bash; zsh and fish files are where those shells look.
            let completion = prefix.appendingPathComponent("share/bash-completion/completions/soundfit").path
            let bash = try runToEnd("/bin/bash", ["-c", "source '\(completion)' && complete -p soundfit"])
            #expect(bash.status == 0 && bash.stdout.contains("soundfit"), "bash: \(bash.stdout) \(bash.stderr)")
            for path in ["share/zsh/site-functions/_soundfit", "share/fish/vendor_completions.d/soundfit.fish"] {
                let text = (try? String(contentsOf: prefix.appendingPathComponent(path), encoding: .utf8)) ?? ""
                #expect(text.contains("soundfit"), "\(path) is empty or missing")
            }

            // The user unit runs the installed binary and restarts it; systemd accepts it.
            let unit = prefix.appendingPathComponent("lib/systemd/user/soundfit.service")
            let unitText = try String(contentsOf: unit, encoding: .utf8)
            #expect(unitText.contains("ExecStart=\(binary) run --no-start-server --state-dir %S/soundfit"), "\(unitText)")
            #expect(unitText.contains("Restart=on-failure"))
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
                // --man=no: the man page of a temporary prefix is not where `man` looks.
                let verify = try runToEnd("/usr/bin/systemd-analyze", ["verify", "--man=no", unit.path])
                #expect(verify.status == 0, "systemd-analyze verify: \(verify.stdout) \(verify.stderr)")
            }
        }

        @Test("soundfit --version prints the committed version, equal to the newest v* tag when one is reachable")
        func versionMatchesTag() throws {
            let version = try runToEnd(try SoundFitBinary.path(), ["--version"])
            let printed = version.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(version.status == 0)
            #expect(printed.wholeMatch(of: /soundfit \d+\.\d+\.\d+/) != nil, "\(printed)")
            // CI clones may have no tags: then only the form is checked.
            let tag = try runToEnd("/usr/bin/git", ["-C", Self.checkout.path, "describe", "--tags", "--abbrev=0", "--match", "v*"])
            let name = tag.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if tag.status == 0, name.hasPrefix("v") {
                #expect(printed == "soundfit \(name.dropFirst())", "the newest tag is \(name); SoundFitVersion.current says \(printed)")
            } else {
                print("note: no v* tag reachable; only the version's form was checked")
            }
        }
    }
}
