import Foundation
import SoundFit
import Testing

extension SoundFitIntegration {
    /// `soundfit verify` through the real binary, `GET /verify` through HTTP,
    /// the page's verification section in Chromium, and the offline measurement against the same
    /// noise played through a real JACK graph.
    @Suite("Verify the fitting") struct Verify {
        /// One row of `soundfit verify --plot`'s CSV.
        struct Row {
            var kind: String, ear: String, level: Double, centre: Double, target: Double, measured: Double
            var tolerance: Double?, passes: Bool?
        }

        static func readCSV(_ url: URL) throws -> [Row] {
            let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            #expect(lines.first == "kind,ear,level_db_spl,centre_hz,target_db,measured_db,tolerance_db,pass")
            return lines.dropFirst().map { line in
                let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                return Row(kind: f[0], ear: f[1], level: Double(f[2])!, centre: Double(f[3])!, target: Double(f[4])!,
                           measured: Double(f[5])!, tolerance: Double(f[6]), passes: f[7].isEmpty ? nil : f[7] == "1")
            }
        }

        /// NAL-RP's gain at `hz` for N3 interpolated in log frequency between the formula's
        /// points (computed in the test from hearing.md's formula: `TestAudiogram.nalR`).
        static func nalRP(_ audiogram: TestAudiogram, at hz: Double) -> Double {
            let points: [Double] = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
            guard let upper = points.firstIndex(where: { $0 >= hz }) else { return audiogram.nalR(at: 6000) }
            if points[upper] == hz || upper == 0 { return audiogram.nalR(at: points[upper]) }
            let a = points[upper - 1], b = points[upper]
            let t = log2(hz / a) / log2(b / a)
            return audiogram.nalR(at: a) + t * (audiogram.nalR(at: b) - audiogram.nalR(at: a))
        }

        @Test("verify passes a good fitting (N3, tech level 1, intensity 1): exit 0, targets are NAL-RP, every band within tolerance; PNG and CSV written")
        func goodFitting() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let plot = directory.appendingPathComponent("n3.png")
            let result = try runToEnd(try SoundFitBinary.path(),
                                      ["verify", "--audiogram", "N3", "--tech-level", "1", "--set", "/processing/intensity=1",
                                       "--plot", plot.path])
            print(result.stdout)
            #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
            #expect(result.stdout.contains("PASS"))
            let rows = try Self.readCSV(directory.appendingPathComponent("n3.csv"))
            let speech = rows.filter { $0.kind == "speech" }
            // 3 levels × 2 ears × 4 bands of tech level 1.
            #expect(speech.count == 24, "\(speech.count) speech rows")
            var worst = 0.0
            for row in speech {
                // Tech level 1 is a static EQ: at every level the target is the prescription.
                let prescribed = Self.nalRP(.n3, at: row.centre)
                #expect(abs(row.target - prescribed) <= 0.01, "\(row.ear) \(row.centre) Hz: target \(row.target), NAL-RP \(prescribed)")
                let tolerance = row.centre <= 4000 ? 1.0 : 2.0
                #expect(abs(row.measured - row.target) <= tolerance, "\(row.ear) \(row.centre) Hz at \(row.level): \(row.measured) vs \(row.target)")
                #expect(row.passes == true && row.tolerance == tolerance)
                worst = max(worst, abs(row.measured - row.target))
            }
            report("verify N3 tech level 1: largest |measured − target|", worst)
            let tones = rows.filter { $0.kind == "tone" }
            #expect(tones.count == 2 * 4 * 13, "\(tones.count) tone rows")
            // Below the output ceiling a static EQ's tone output is input + prescription.
            for row in tones where row.target < 95 {
                #expect(abs(row.measured - row.target) <= 1, "tone \(row.ear) \(row.centre) Hz at \(row.level): \(row.measured) vs \(row.target)")
            }
            try Self.expectValidPNG(plot, width: 1200, height: 800)
        }

        /// Checked by Python's zlib, independent of the encoder: signature, IHDR size and type,
        /// every chunk's CRC-32, an IDAT that inflates (zlib checks the Adler-32) to exactly one
        /// filter byte plus 3 bytes per pixel per row, and some dark pixels (axes and curves).
        static func expectValidPNG(_ url: URL, width: Int, height: Int) throws {
            let check = """
                import os, json, struct, sys, zlib
                data = open(sys.argv[1], 'rb').read()
                result = {'signature': data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'crc': True, 'types': []}
                offset, idat = 8, b''
                while offset + 12 <= len(data):
                    length, kind = struct.unpack('>I4s', data[offset:offset + 8])
                    body = data[offset + 8:offset + 8 + length]
                    (crc,) = struct.unpack('>I', data[offset + 8 + length:offset + 12 + length])
                    result['crc'] &= zlib.crc32(kind + body) == crc
                    result['types'].append(kind.decode())
                    if kind == b'IHDR':
                        result['size'] = list(struct.unpack('>II', body[:8])); result['format'] = list(body[8:])
                    if kind == b'IDAT':
                        idat += body
                    offset += 12 + length
                raw = zlib.decompress(idat)
                result['inflated'] = len(raw)
                stride = result['size'][0] * 3 + 1
                result['dark'] = sum(1 for i, b in enumerate(raw) if i % stride and b < 100)
                print(json.dumps(result))
                """
            let script = url.deletingLastPathComponent().appendingPathComponent("check_png.py")
            try check.write(to: script, atomically: true, encoding: .utf8)
            let run = try runToEnd("/usr/bin/python3", [script.path, url.path])
            #expect(run.status == 0, "python: \(run.stderr)")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(result["signature"] as? Bool == true && result["crc"] as? Bool == true, "\(result)")
            #expect(result["size"] as? [Int] == [width, height] && result["format"] as? [Int] == [8, 2, 0, 0, 0], "\(result)")
            #expect(result["types"] as? [String] == ["IHDR", "IDAT", "IEND"], "\(result)")
            #expect(result["inflated"] as? Int == (width * 3 + 1) * height, "\(result)")
            #expect((result["dark"] as? Int ?? 0) > 1000, "\(result)")
        }

        @Test("verify fails a broken fitting (a narrow +6 dB peak at 2 kHz over N3): exit 1, the 2 kHz band named, no other")
        func brokenFitting() throws {
            let result = try runToEnd(try SoundFitBinary.path(),
                                      ["verify", "--audiogram", "N3", "--tech-level", "1", "--no-tones",
                                       "--set", "/filter/enabled=1", "--set", "/filter/type=peak",
                                       "--set", "/filter/cutoff=2000", "--set", "/filter/gain=6", "--set", "/filter/q=4"])
            print(result.stdout)
            #expect(result.status == 1, "exit \(result.status): \(result.stderr)")
            #expect(result.stdout.contains("FAIL"))
            #expect(result.stdout.contains("left 2000 Hz at 65 dB SPL: measured"), "\(result.stdout)")
            for other in ["500", "1000", "4000"] {
                #expect(!result.stdout.contains(" \(other) Hz at 65 dB SPL: measured"), "\(other) Hz is an octave from the peak: \(result.stdout)")
            }
        }

        /// The delivered gain through `soundfit verify`: at tech levels 2–4 the delivered gain is the
        /// prescription at 65 dB SPL and the gain law at 55 and 80 (N3 moderate, S2 steep, N7
        /// profound with the output limit raised to its derived maximum).
        @Test("verify passes N3, S2 and N7 at tech levels 2–4, intensity 1", arguments: [2, 3, 4])
        func goodFittingCompressing(techLevel: Int) throws {
            for audiogram in ["N3", "S2", "N7"] {
                let result = try runToEnd(try SoundFitBinary.path(),
                                          ["verify", "--audiogram", audiogram, "--tech-level", "\(techLevel)",
                                           "--set", "/processing/intensity=1", "--no-tones", "--max-output", "130"])
                #expect(result.status == 0, "\(audiogram), tech level \(techLevel): \(result.stdout)")
                #expect(result.stdout.contains("PASS"))
            }
        }

        /// A profound loss (N7) under the default 100 dB SPL output limit cannot get its
        /// prescription: verify fails and says that the limit, not the fitting, holds it down.
        @Test("verify names the output limit when it holds a severe loss's speech down")
        func outputLimitHoldsN7() throws {
            let result = try runToEnd(try SoundFitBinary.path(),
                                      ["verify", "--audiogram", "N7", "--tech-level", "3", "--set", "/processing/intensity=1",
                                       "--no-tones"])
            #expect(result.status == 1, "\(result.stdout)")
            #expect(result.stdout.contains("the output limit (100.0 dB SPL, --max-output) is below the left ear's derived maximum output"),
                    "\(result.stdout)")
        }

        @Test("verify's bad inputs get a message and a non-zero exit")
        func refusals() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cases: [([String], String)] = [
                (["verify", "--audiogram", "N9"], "--audiogram must be one of N1"),
                (["verify", "--audiogram", "N3", "--plot", directory.appendingPathComponent("x.jpg").path], "--plot must name a .png"),
                (["verify", "--tech-level", "1", "--no-tones"], "no hearing profile"),
                (["verify", "--audiogram", "N3", "--tech-level", "7"], "--tech-level must be 1…4"),
                (["verify", "--audiogram", "N3", "--profile", "p.json"], "not both"),
                (["verify", "--audiogram", "N3", "--set", "/filter/nope=1"], "unknown address /filter/nope"),
                (["verify", "--audiogram", "N3", "--no-tones", "--plot", directory.appendingPathComponent("missing/x.png").path],
                 "cannot write the plot"),
            ]
            for (arguments, hint) in cases {
                let result = try runToEnd(try SoundFitBinary.path(), arguments)
                #expect(result.status != 0, "\(arguments): exit 0")
                #expect(result.stderr.contains(hint), "\(arguments): stderr \(result.stderr)")
            }
        }

        /// The speech rows of a verify JSON document, keyed `ear level centre`.
        static func measured(_ object: [String: Any]) -> [String: (target: Double, measured: Double)] {
            var result: [String: (Double, Double)] = [:]
            for entry in object["speech"] as? [[String: Any]] ?? [] {
                let ear = entry["ear"] as? String ?? "", level = entry["level"] as? Double ?? 0
                for band in entry["bands"] as? [[String: Any]] ?? [] {
                    let key = "\(ear) \(Int(level)) \(Int(band["centre"] as? Double ?? 0))"
                    result[key] = (band["target"] as? Double ?? .nan, band["measured"] as? Double ?? .nan)
                }
            }
            return result
        }

        @Test("GET /verify answers the running fitting's numbers (those of soundfit verify on the same fitting); a foreign Origin is refused 403")
        func httpVerify() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let rig = try Rig.start(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "1"]))
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort)

            let (status, object) = try PlainHTTP.getJSON(port: port, "/verify?tones=0")
            #expect(status == 200, "\(object)")
            #expect(object["techLevel"] as? Double == 1 && object["passes"] as? Bool == true, "\(object["failures"] ?? "")")
            #expect((object["tones"] as? [Any])?.isEmpty == true)
            let served = Self.measured(object)
            #expect(served.count == 24, "\(served.keys.sorted())")
            let prescription = object["prescription"] as? [[String: Any]] ?? []
            #expect(prescription.count == 2 && (prescription.first?["prescribed"] as? [Double])?.count == 4, "\(prescription)")

            // The CLI on the same fitting (profile, tech level, the recommended intensity).
            let plot = directory.appendingPathComponent("cli.png")
            let cli = try runToEnd(try SoundFitBinary.path(), ["verify", "--profile", profile.path, "--tech-level", "1",
                                                               "--no-tones", "--plot", plot.path])
            #expect(cli.status == 0, "\(cli.stdout)")
            var largest = 0.0
            for row in try Self.readCSV(directory.appendingPathComponent("cli.csv")) where row.kind == "speech" {
                let key = "\(row.ear) \(Int(row.level)) \(Int(row.centre))"
                guard let web = served[key] else { Issue.record("GET /verify lacks \(key)"); continue }
                largest = max(largest, abs(web.measured - row.measured), abs(web.target - row.target))
            }
            report("|GET /verify − soundfit verify|, largest over 24 bands", largest)
            #expect(largest <= 0.02, "the running instance's verification differs from the CLI's by \(largest) dB")

            for (query, reason) in [("/verify?tones=2", "tones: expects 0 or 1"), ("/verify?x=1", "unknown query parameter")] {
                let (refused, answer) = try PlainHTTP.getJSON(port: port, query)
                #expect(refused == 400 && (answer["error"] as? String ?? "").contains(reason), "\(query): \(refused) \(answer)")
            }
            // A foreign page must not make SoundFit spend seconds rendering: refused before the route.
            let hostile = try RawHTTPConnection(port: port)
            hostile.send(RawHTTPConnection.request("/verify?tones=0", host: "127.0.0.1:\(port)",
                                                   headers: [("Origin", "http://evil.example")]))
            let response = hostile.readResponse()
            #expect(response?.status == 403, "\(String(describing: response?.status))")
            #expect(response.map { String(decoding: $0.body, as: UTF8.self).contains("origin 'http://evil.example' is refused") } == true)
            // The page's own origin is answered.
            let own = try RawHTTPConnection(port: port)
            own.send(RawHTTPConnection.request("/verify?tones=0", host: "127.0.0.1:\(port)",
                                               headers: [("Origin", "http://127.0.0.1:\(port)")]))
            #expect(own.readResponse()?.status == 200)
        }

        @Test("GET /verify on a port with a token (--http-token): refused 403 without it, answered with ?token= and Bearer")
        func httpVerifyNeedsTheToken() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: nil, in: directory)
            let rig = try Rig.start(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "1",
                                                                           "--http-token", "verify-secret"]))
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort)
            let (refused, reason) = try PlainHTTP.getJSON(port: port, "/verify?tones=0")
            #expect(refused == 403 && (reason["error"] as? String ?? "").contains("token"), "\(refused) \(reason)")
            let (status, object) = try PlainHTTP.getJSON(port: port, "/verify?tones=0&token=verify-secret")
            #expect(status == 200 && object["passes"] as? Bool == true, "\(status) \(object["failures"] ?? object)")
            let bearer = try RawHTTPConnection(port: port)
            bearer.send(RawHTTPConnection.request("/verify?tones=0", host: "127.0.0.1:\(port)",
                                                  headers: [("Authorization", "Bearer verify-secret")]))
            #expect(bearer.readResponse()?.status == 200)
        }

        @Test("The page's verification section draws target and measured per level and the prescribed and applied gains")
        func pageDrawsVerification() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let rig = try Rig.start(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "3"]))
            defer { rig.stop() }
            let port = try #require(rig.ready.httpPort)
            let page = try BrowserDriver(url: "http://127.0.0.1:\(port)/ui/", width: 1280, height: 900)
            defer { page.quit() }
            try page.call("click", ["selector": "#verify-run"])
            let verdict = try page.call("wait_text", ["selector": "#verify-verdict", "contains": "tech level 3", "timeout": 60]) as? String
            #expect(verdict?.contains("PASS") == true || verdict?.contains("FAIL") == true, "\(verdict ?? "")")
            let drawn = try page.call("evaluate", ["source": """
                const count = (s) => document.querySelectorAll(s).length;
                return {left: count('#verify-left polyline'), right: count('#verify-right polyline'),
                        dots: count('#verify-left circle'), gains: count('#prescribed-left polyline'),
                        bands: document.getElementById('verify-left').plotData.map(r => r.bands.length)};
                """]) as? [String: Any]
            // 3 levels × (target + measured) per ear; 8 dots per level; prescribed + applied.
            #expect(drawn?["left"] as? Int == 6 && drawn?["right"] as? Int == 6 && drawn?["dots"] as? Int == 24, "\(drawn ?? [:])")
            #expect(drawn?["gains"] as? Int == 2 && drawn?["bands"] as? [Int] == [8, 8, 8], "\(drawn ?? [:])")
            let path = try page.screenshot("web-verify", full: true)
            print("screenshot: \(path)")
        }

        @Test("Through JACK (N3, tech level 3, speech noise at 55, 65 and 80 dB SPL): the insertion gains equal the offline render's within 0.2 dB")
        func throughJack() throws {
            let directory = try UniqueName.temporaryDirectory("soundfit-verify")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n3, in: directory)
            // Offline: soundfit verify's numbers on the same fitting.
            let plot = directory.appendingPathComponent("offline.png")
            let offline = try runToEnd(try SoundFitBinary.path(), ["verify", "--profile", profile.path, "--tech-level", "3",
                                                                   "--no-tones", "--plot", plot.path])
            #expect(offline.status == 0 || offline.status == 1, "\(offline.stderr)")
            let rows = try Self.readCSV(directory.appendingPathComponent("offline.csv")).filter { $0.kind == "speech" }

            let rig = try Rig.start(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "3"]))
            defer { rig.stop() }
            let periodFrames = FourierTransform.powerOfTwo(atLeast: Int(2.7 * 48000))
            let clients = try TimedAudioClients(server: rig.server.name, channels: 2, playCapacity: periodFrames,
                                                recordCapacity: 2 * periodFrames)
            defer { clients.close() }
            try clients.connect(through: rig.ready.client)
            let analysis = BandPowerAnalysis(sampleRate: 48000)
            var largest = 0.0
            for level in FittingVerification.speechLevels {
                let noise = SpeechShapedNoise.samples(level: level, fullScaleSPL: 100, sampleRate: 48000, seconds: 2.7)
                let expected = rows.filter { $0.level == level }
                let centres = expected.filter { $0.ear == "left" }.map(\.centre)
                var measured: [[Double]] = []
                var clean = false
                for attempt in 1...5 {
                    try clients.play(noise)   // looped: the noise is periodic, so the loop has no seam
                    try clients.startRecording(frames: 2 * noise.count)
                    let recording = try clients.finishRecording()
                    // The first period lets the detectors settle (they did in the offline render
                    // too); the second is a whole period of the steady state, a circular shift
                    // of the one the offline render measures.
                    measured = (0..<2).map { channel in
                        analysis.insertionGains(input: noise[...], output: recording.channels[channel][noise.count...],
                                                centres: centres)
                    }
                    if recording.isContiguous && recording.xruns == 0 { clean = true; break }
                    print("note: \(level) dB SPL: recording with a skipped cycle (contiguous: \(recording.isContiguous)) "
                          + "or \(recording.xruns) xrun(s) (attempt \(attempt)); recording again")
                }
                // A recording with a skipped cycle measures the glitch, not the fitting.
                try #require(clean, "\(level) dB SPL: no recording without a skipped cycle or an xrun in 5")
                var largestAtLevel = 0.0
                for (channel, ear) in ["left", "right"].enumerated() {
                    for (index, row) in expected.filter({ $0.ear == ear }).enumerated() {
                        let difference = measured[channel][index] - row.measured
                        largest = max(largest, abs(difference))
                        largestAtLevel = max(largestAtLevel, abs(difference))
                        #expect(abs(difference) <= 0.2,
                                "\(ear) \(row.centre) Hz at \(level) dB SPL: JACK \(measured[channel][index]) dB, offline \(row.measured) dB")
                    }
                }
                report("|JACK − offline| insertion gain at \(level) dB SPL, largest over 16 bands", largestAtLevel)
            }
            try clients.play([Float](repeating: 0, count: 256))
            report("|JACK − offline| insertion gain, N3 tech level 3, 55/65/80 dB SPL, largest over 48 bands", largest)
        }
    }
}
