import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// User patches are bounded by count and bytes (`--max-user-patches`, `--max-user-patch-bytes`):
    /// a client saving in a loop fills neither the disk nor the memory.
    @Suite("Patch bounds") struct PatchBounds {
        /// The `user-*.json` files of `directory/patches` and their bytes together.
        private func userFiles(_ directory: URL) -> (count: Int, bytes: Int) {
            let patches = directory.appendingPathComponent("patches")
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: patches.path)) ?? []).filter { $0.hasPrefix("user-") }
            let bytes = names.reduce(0) { total, name in
                total + ((try? FileManager.default.attributesOfItem(atPath: patches.appendingPathComponent(name).path)[.size] as? NSNumber)?.intValue ?? 0)
            }
            return (names.count, bytes)
        }

        @Test("A flood of /patch/save stops at 20 patches: the 21st and later get the error; overwriting still works; the bound holds after a restart")
        func countBound() throws {
            let rig = try Rig.start(.server(directory: "sf-patch-bounds"))
            defer { rig.stop() }
            let bounds = ["--max-user-patches", "20", "--max-user-patch-bytes", "65536"]
            var instance: SoundFitInstance? = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1, arguments: bounds)
            defer { instance?.stop() }
            let osc = try #require(instance).osc

            var saved: [Int32] = []
            var errors: [String] = []
            for index in 1...30 {
                let answer = try osc.request("/patch/save", [.string("flood \(index)")], reply: "/patch/saved")
                if answer.address == "/patch/saved", case .int(let number)? = answer.arguments.first {
                    saved.append(number)
                } else {
                    expectErrorReply(answer, for: "/patch/save")
                    errors.append(answer.string(1) ?? "")
                }
            }
            #expect(saved == (1...20).map { -Int32($0) }, "\(saved)")
            #expect(errors.count == 10)
            #expect(errors.first == "cannot save patch 'flood 21': at most 20 user patches (--max-user-patches); delete some", "\(errors)")
            let files = userFiles(rig.directory)
            #expect(files.count == 20 && files.bytes <= 65536, "\(files)")
            print("note: 30 saves with --max-user-patches 20: \(files.count) files, \(files.bytes) bytes")

            // At the bound, an existing name is overwritten (same number); a new one is refused.
            expectApplied(try osc.set("/output/gain", .float(-7)), "/output/gain", .float(-7))
            let overwritten = try osc.request("/patch/save", [.string("flood 5")], reply: "/patch/saved")
            #expect(overwritten.arguments == [.int(-5), .string("flood 5")], "\(overwritten)")
            #expect(String(decoding: (try? Data(contentsOf: rig.directory.appendingPathComponent("patches/user-5.json"))) ?? Data(),
                           as: UTF8.self).contains("\"/output/gain\": -7"))
            // Deleting makes room for one.
            let deleted = try osc.request("/patch/delete", [.int(-1)], reply: "/patch/deleted")
            #expect(deleted.address == "/patch/deleted", "\(deleted)")
            let again = try osc.request("/patch/save", [.string("after delete")], reply: "/patch/saved")
            #expect(again.address == "/patch/saved", "\(again)")
            let refused = try osc.request("/patch/save", [.string("one too many")], reply: "/patch/saved")
            expectErrorReply(refused, for: "/patch/save", hint: "at most 20 user patches")
            #expect(userFiles(rig.directory).count == 20)

            // The files on disk count after a restart too.
            instance?.stop()
            instance = nil
            let restarted = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1, arguments: bounds)
            defer { restarted.stop() }
            let afterRestart = try restarted.osc.request("/patch/save", [.string("after restart")], reply: "/patch/saved")
            expectErrorReply(afterRestart, for: "/patch/save", hint: "at most 20 user patches (--max-user-patches)")
            #expect(userFiles(rig.directory).count == 20)
        }

        @Test("The byte bound: saves stop before the files pass --max-user-patch-bytes, with the error naming the flag")
        func byteBound() throws {
            try Rig.run(.server(directory: "sf-patch-bytes")) { rig in
                let instance = try SoundFitInstance(server: rig.server, stateDirectory: rig.directory, channels: 1,
                                                    arguments: ["--max-user-patch-bytes", "8192"])
                defer { instance.stop() }
                var saved = 0
                var refusal: OSCTestMessage?
                for index in 1...100 {
                    let answer = try instance.osc.request("/patch/save", [.string("bytes \(index)")], reply: "/patch/saved")
                    guard answer.address == "/patch/saved" else {
                        refusal = answer
                        break
                    }
                    saved += 1
                }
                let files = userFiles(rig.directory)
                print("note: --max-user-patch-bytes 8192: \(saved) patches saved, \(files.bytes) bytes on disk")
                #expect(saved > 0 && saved < 100 && files.count == saved && files.bytes <= 8192, "\(saved) saved, \(files)")
                let answer = try #require(refusal, "no refusal in 100 saves")
                expectErrorReply(answer, for: "/patch/save")
                #expect(answer.string(1) == "cannot save patch 'bytes \(saved + 1)': user patches take at most 8192 bytes together (--max-user-patch-bytes); delete some",
                        "\(answer)")
            }
        }

        @Test("The defaults are 1000 patches and 16 MiB; out-of-range bounds are refused with a message")
        func defaultsAndValidation() throws {
            let help = try SoundFitCommandLine.run(["run", "--help"])
            let text = help.standardOutput + help.standardError
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flat.contains("--max-user-patches <max-user-patches>"), "\(text)")
            #expect(flat.contains("/patch/save of a new name is refused beyond. (default: 1000)"), "\(flat)")
            #expect(flat.contains("(default: 16777216)"), "\(flat)")
            let zero = try SoundFitCommandLine.run(["run", "--max-user-patches", "0"])
            #expect(!zero.succeeded && zero.standardError.contains("--max-user-patches must be 1…100000, got 0"), "\(zero.standardError)")
            let tiny = try SoundFitCommandLine.run(["run", "--max-user-patch-bytes", "100"])
            #expect(!tiny.succeeded && tiny.standardError.contains("--max-user-patch-bytes must be 4096…1073741824, got 100"), "\(tiny.standardError)")
        }
    }
}
