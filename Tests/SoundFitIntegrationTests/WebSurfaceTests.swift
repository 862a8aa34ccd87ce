import Foundation
import Testing

extension SoundFitIntegration {
    /// The web control surface (`/ui`) in a real browser: headless Chromium driven by selenium
    /// (`Tests/Browser/web_surface_driver.py`), against the real binary on a jackd dummy, checked
    /// over UDP OSC and measured through JACK. Screenshots go to `.build/screenshots/`.
    @Suite("Web surface in a browser") struct WebSurface {
        /// A rig (its HTTP server on a free port: `--http-port 0`, `extraArguments` for `soundfit
        /// run`), and the page open in Chromium.
        static func open(_ extraArguments: [String] = []) throws -> (SoundFitRig, BrowserDriver) {
            let rig = try SoundFitRig(extraArguments: extraArguments)
            do {
                guard let port = rig.ready.httpPort else {
                    throw IntegrationError("the ready line names no HTTP port: \(rig.ready.fields)")
                }
                return (rig, try BrowserDriver(url: "http://127.0.0.1:\(port)/ui/"))
            } catch {
                rig.stop()
                throw error
            }
        }

        @Test("Every parameter of /list has a control of its kind; the cutoff slider sets the value (UDP) and the audio (JACK); a UDP change moves the slider")
        func controlsFollowTheModel() throws {
            let (rig, page) = try Self.open()
            defer { page.quit(); rig.stop() }
            let osc = rig.osc

            // One control per /list/param, of the parameter's kind and access.
            osc.send("/list")
            let listed = try osc.waitFor("/list/end") { $0.address == "/list/end" }.before.filter { $0.address == "/list/param" }
            let controls = try #require(try page.call("controls") as? [[String: Any]])
            #expect(controls.compactMap { $0["path"] as? String } == listed.compactMap { $0.string(0) })
            for parameter in listed {
                let path = parameter.string(0) ?? "", type = parameter.string(1) ?? "", access = parameter.string(2) ?? ""
                let control = controls.first { $0["path"] as? String == path } ?? [:]
                let expected = access == "r" ? "readonly" : type == "bool" ? "checkbox" : type == "string" ? "select-one" : "range"
                #expect(control["type"] as? String == expected, "\(path) (\(type), \(access)): \(control)")
            }

            // A change over UDP moves the slider, to the position of the model's (logarithmic) taper.
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            expectApplied(try osc.set("/filter/cutoff", .float(16000)), "/filter/cutoff", .float(16000))
            let moved = try #require(try page.call("wait_value", ["path": "/filter/cutoff", "value": 16000, "tolerance": 0.5]) as? [String: Any])
            let position = try #require(moved["position"] as? Double)
            #expect(abs(position - log(16000.0 / 20) / log(1000)) <= 0.001, "slider at \(position)")

            let audio = try rig.audio()
            let tone = Capture.tone(4000)
            let open = Capture.toneLevel(try audio.capture([tone], frames: Capture.captureFrames)[0], frequency: 4000)
            report("web: 4 kHz through lowpass 16 kHz", open)

            // A person clicks the slider at a fifth of its travel: about 80 Hz on the log taper.
            let clicked = try #require(try page.call("click_slider", ["path": "/filter/cutoff", "fraction": 0.2]) as? [String: Any])
            #expect(clicked["state"] as? String == "applied", "\(clicked)")
            let shown = try #require((clicked["value"] as? String).flatMap(Double.init))
            let clickedPosition = try #require(clicked["position"] as? Double)
            #expect(abs(shown - 20 * pow(1000, clickedPosition)) <= shown * 0.005, "value \(shown) at position \(clickedPosition)")
            #expect(shown < 200, "the click set \(shown) Hz")
            let queried = try osc.query("/filter/cutoff").number ?? .nan
            #expect(abs(queried - shown) <= shown * 1e-5, "UDP reads \(queried) Hz, the page shows \(shown) Hz")

            let closed = Capture.toneLevel(try audio.capture([tone], frames: Capture.captureFrames)[0], frequency: 4000)
            report("web: 4 kHz after the slider set \(Int(shown)) Hz", closed)
            #expect(abs(open) <= 0.5, "4 kHz through the open filter: \(open) dB")
            #expect(closed <= open - 30, "4 kHz fell only from \(open) to \(closed) dB")
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
        }

        @Test("A user patch saved and deleted by another client (UDP) appears in the page's patch list and leaves it")
        func patchListFollowsOtherClients() throws {
            let (rig, page) = try Self.open()
            defer { page.quit(); rig.stop() }
            _ = try page.call("wait_patch", ["name": "Transparent"])  // a factory patch: the first listing is in
            let saved = try rig.osc.ask("/patch/save", [.string("from udp")], reply: "/patch/saved")
            let number = try #require(saved.number(0), "\(saved)")
            let entries = try #require(try page.call("wait_patch", ["name": "from udp"]) as? [String])
            #expect(entries.filter { $0.hasSuffix(": from udp") }.count == 1, "\(entries)")
            let count = entries.count
            let deleted = try rig.osc.ask("/patch/delete", [.int(Int32(number))], reply: "/patch/deleted")
            #expect(deleted.address == "/patch/deleted", "\(deleted)")
            let after = try #require(try page.call("wait_patch", ["name": "from udp", "present": false]) as? [String])
            #expect(after.count == count - 1, "\(entries) → \(after)")
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
        }

        @Test("The response plot of lowpass 1 kHz reads −24.5 ± 0.5 dB at 4 kHz and −3.0 ± 0.1 dB at 1 kHz, per ear")
        func responsePlot() throws {
            let (rig, page) = try Self.open()
            defer { page.quit(); rig.stop() }
            let osc = rig.osc
            expectApplied(try osc.set("/filter/type", .string("lowpass")), "/filter/type", .string("lowpass"), changed: false)
            expectApplied(try osc.set("/filter/cutoff", .float(1000)), "/filter/cutoff", .float(1000), changed: false)
            _ = try page.call("wait_value", ["path": "/filter/cutoff", "value": 1000, "tolerance": 0.01])
            // Refreshes of earlier changes are drawn once the chart is idle: no fetch runs, waits or is due.
            try page.call("wait_until", ["source": "return document.getElementById('response-chart').dataset.idle === 'true'"])
            let before = try #require(try page.call("now") as? Double)
            // The plot must follow this change: only a refresh the page asks for after it counts.
            expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))
            // What GET /response answered and the chart drew: frequencies, left, right (and the
            // sample rate, point count and stages beside them).
            let plotted = try #require(try page.call("response", ["after": before]) as? [String: Any])
            let frequencies = try #require(plotted["frequencies"] as? [Double])
            #expect(frequencies.count >= 128)
            for ear in ["left", "right"] {
                let levels = try #require(plotted[ear] as? [Double])
                let at4k = Self.interpolated(frequencies, levels, at: 4000), at1k = Self.interpolated(frequencies, levels, at: 1000)
                report("web response plot, \(ear), 4 kHz", at4k)
                report("web response plot, \(ear), 1 kHz", at1k)
                #expect(abs(at4k + 24.5) <= 0.5, "\(ear) at 4 kHz: \(at4k) dB")
                #expect(abs(at1k + 3.0) <= 0.1, "\(ear) at 1 kHz: \(at1k) dB")
            }
            try page.screenshot("web-response")
        }

        /// The plotted level at `hz`, linear in log frequency between the neighbouring points.
        static func interpolated(_ frequencies: [Double], _ levels: [Double], at hz: Double) -> Double {
            guard let upper = frequencies.firstIndex(where: { $0 >= hz }), upper > 0 else { return .nan }
            let f0 = log(frequencies[upper - 1]), f1 = log(frequencies[upper])
            let t = f1 == f0 ? 0 : (log(hz) - f0) / (f1 - f0)
            return levels[upper - 1] + t * (levels[upper] - levels[upper - 1])
        }

        @Test("The meters follow a tone into the input; the audiogram chart shows the submitted profile; the I-heard-it button and the space bar answer a running test")
        func metersAudiogramAndHearingTest() throws {
            let (rig, page) = try Self.open()
            defer { page.quit(); rig.stop() }
            let osc = rig.osc
            let audio = try rig.audio()

            // Meters: a −20 dBFS tone shows on every input and output channel, and silence falls away.
            try audio.startPlaying([Capture.tone(1000)])
            // A −20 dBFS sine peaks at −20 dBFS (its RMS is −23).
            let input = try page.call("wait_meter", ["side": "input", "low": -20.5, "high": -19.5])
            let output = try page.call("wait_meter", ["side": "output", "low": -20.5, "high": -19.5])
            print("measured: web meters with a −20 dBFS tone: input \(input), output \(output)")
            try page.screenshot("web-surface-tone")
            try audio.stopPlaying()
            _ = try page.call("wait_meter", ["side": "input", "low": -1000, "high": -100])

            // The audiogram form: what the chart draws is what was submitted, and what SoundFit holds.
            let right = [[500, 20], [1000, 25], [2000, 40], [4000, 55]], left = [[500, 30], [1000, 35], [2000, 45], [4000, 65]]
            let drawn = try #require(try page.call("fill_audiogram", ["right": right, "left": left]) as? [String: Any])
            let marks = try #require(drawn["marks"] as? [String: Any])
            #expect(marks["o"] as? Int == right.count && marks["x"] as? Int == left.count, "\(marks)")
            osc.send("/profile/audiogram")
            let held = try osc.sync().filter { $0.address == "/profile/audiogram" }  // both ears' replies come before /synced
            for (ear, points) in [("left", left), ("right", right)] {
                let reply = held.first { $0.string(0) == ear }
                let numbers = reply?.arguments.dropFirst().compactMap(\.number) ?? []
                #expect(numbers == points.flatMap { $0.map(Double.init) }, "\(ear): SoundFit holds \(String(describing: reply))")
            }
            try page.screenshot("web-surface", full: true)
            try page.screenshot("web-surface-phone", width: 390, height: 844, full: true)

            // The hearing test, started on the page and answered with the button and the space bar.
            _ = try osc.ask("/test/config", HearingTestThroughJack.fastTiming, reply: "/test/config")
            _ = try osc.ask("/subscribe", reply: "/subscribed")
            osc.drain()
            try page.call("click", ["selector": "#test-start"])
            _ = try page.call("test_state", ["state": "running"])
            let presses = try page.call("press_heard", ["seconds": 4]) as? Int ?? 0
            try page.screenshot("web-hearing-test")
            try page.call("click", ["selector": "#test-cancel"])
            _ = try page.call("test_state", ["state": "cancelled"])
            // Nobody else answered: only the page's presses can have answered a presentation
            // (`cancelled presentations N heard M`, told once the test is over).
            // The reports reach subscribers on the thread that makes them, so every one the test
            // made by now is in before osc's /synced; the last of them is the terminal one.
            let states = try osc.sync().filter { $0.address == "/test/state" }
            #expect(states.last?.string(0) == "cancelled", "\(states)")
            #expect((states.last?.number(4) ?? 0) > 0, "\(String(describing: states.last)) after \(presses) presses: none counted")
            // The running reports carry no level (they come only between presentations).
            #expect(!states.contains { $0.arguments.contains(.string("level_db_hl")) }, "\(states)")
        }
    }
}
