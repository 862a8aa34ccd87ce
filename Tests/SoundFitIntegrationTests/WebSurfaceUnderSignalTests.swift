import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The page while a signal plays: the response chart follows the band gains
    /// the personalization applies to the signal now, the units read as written, the meter rows
    /// keep to one line. Real Chromium, the real binary on a jackd dummy, a tone through JACK.
    @Suite("Web surface under signal") struct WebSurfaceUnderSignal {
        /// The chart's reading at 1 kHz per ear, from the first chart the page drew from a request
        /// it made after `after` (the page's clock), and whether a live refresh drew it.
        static func charted(_ page: BrowserDriver, after: Double) throws -> (left: Double, right: Double, live: Bool) {
            let plotted = try #require(try page.call("response", ["after": after]) as? [String: Any])
            let frequencies = try #require(plotted["frequencies"] as? [Double])
            let left = try #require(plotted["left"] as? [Double]), right = try #require(plotted["right"] as? [Double])
            let live = try page.call("evaluate", ["source": "return document.getElementById('response-chart').dataset.live"]) as? String
            return (WebSurface.interpolated(frequencies, left, at: 1000), WebSurface.interpolated(frequencies, right, at: 1000),
                    live == "true")
        }

        @Test("With a 1 kHz tone through an N3 fitting the chart follows the live gain at 1 kHz (±0.5 dB), level by level, at most 4 times a second")
        func chartFollowsTheLiveGain() throws {
            let directory = try UniqueName.temporaryDirectory("sf-web-live")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n3, in: directory)
            let (rig, page) = try WebSurface.open(["--profile", profile.path, "--tech-level", "3"])
            defer { page.quit(); rig.stop() }
            let osc = rig.osc
            #expect(try osc.pollQuery("/processing/enabled") { $0 == .int(1) } == .int(1))
            expectApplied(try osc.set("/processing/intensity", .float(1)), "/processing/intensity", .float(1))
            let audio = try rig.audio()

            var charts: [Double] = []
            for level in [50.0, 85.0] {
                try audio.startPlaying([Capture.tone(1000, amplitude: sineAmplitude(levelDBSPL: level))])
                try audio.waitForAudio(seconds: 1)  // the detectors settle on the tone: 1 s of it
                let before = try #require(try page.call("now") as? Double)
                // What SoundFit reports now (UDP /response), and the chart the page drew next:
                // no parameter changed, so only a live refresh can draw it.
                let live = try ResponseAndMeters.askResponse(osc, points: 1024)
                let chart = try Self.charted(page, after: before)
                try audio.stopPlaying()
                let reported = live.value(live.left, at: 1000), reportedRight = live.value(live.right, at: 1000)
                report("web live chart at 1 kHz, tone \(Int(level)) dB SPL (reported \(String(format: "%.2f", reported)) dB)", chart.left)
                #expect(chart.live, "the chart was not drawn by a live refresh")
                #expect(abs(chart.left - reported) <= 0.5, "\(level) dB SPL: chart \(chart.left) dB, SoundFit \(reported) dB")
                #expect(abs(chart.right - reportedRight) <= 0.5, "\(level) dB SPL: chart \(chart.right) dB, SoundFit \(reportedRight) dB")
                charts.append(chart.left)
                // Let the gains return to rest before the next level: 0.5 s of silence (the
                // release time), counted in JACK cycles.
                try audio.waitForAudio(seconds: 0.5)
            }
            report("web live chart at 1 kHz: change from 50 to 85 dB SPL", charts[1] - charts[0])
            #expect(charts[0] - charts[1] >= 3, "the chart at 1 kHz moved only from \(charts[0]) to \(charts[1]) dB")

            // While the tone plays the page asks at most 4 times a second (and does ask).
            try audio.startPlaying([Capture.tone(1000, amplitude: sineAmplitude(levelDBSPL: 70))])
            let count = "return [Number(document.getElementById('response-chart').dataset.fetches), Date.now()]"
            // The page's refreshes are under way once one more fetch started after the tone began.
            let started = try #require(try page.call("evaluate", ["source": count]) as? [Double])
            try page.call("wait_until", ["source": "return Number(document.getElementById('response-chart').dataset.fetches) > \(Int(started[0]))"])
            let first = try #require(try page.call("evaluate", ["source": count]) as? [Double])
            // Twelve more fetches, the page's own events: at most 4 a second they take ≥ 3 s.
            try page.call("wait_until", ["source": "return Number(document.getElementById('response-chart').dataset.fetches) >= \(Int(first[0]) + 12)"])
            let last = try #require(try page.call("evaluate", ["source": count]) as? [Double])
            let requests = last[0] - first[0], seconds = (last[1] - first[1]) / 1000
            report("web live chart: requests in \(String(format: "%.2f", seconds)) s of tone", requests, unit: "requests")
            // Starts at least 250 ms apart: at most one more than the interval holds.
            #expect(requests >= 2 * seconds && requests <= (seconds / 0.25).rounded(.down) + 1, "\(requests) requests in \(seconds) s")

            // Equal ears stay distinguishable: the left dashed on top of the right, and the legend says so.
            let ears = try #require(try page.call("evaluate", ["source": """
                const lines = [...document.querySelectorAll('#response-chart polyline')];
                return {order: lines.map(l => l.getAttribute('class')),
                        dashes: lines.map(l => getComputedStyle(l).strokeDasharray),
                        legend: document.querySelector('#response-chart + .legend').innerText};
                """]) as? [String: Any])
            #expect(ears["order"] as? [String] == ["ear-right", "ear-left"], "\(ears)")
            let dashes = ears["dashes"] as? [String] ?? []
            #expect(dashes.first == "none" && dashes.last != "none", "\(ears)")
            let legend = ears["legend"] as? String ?? ""
            #expect(legend.contains("left (dashed)") && legend.contains("right (solid)"), "\(legend)")
            try page.screenshot("web-live-response")

            // After the tone the chart follows the gains back to rest (the detectors' release
            // takes longer than one redraw) and shows what SoundFit reports at rest.
            try audio.stopPlaying()
            try audio.waitForAudio(seconds: 4)  // the detectors' release: 4 s of silence, the measured behaviour
            let rest = try ResponseAndMeters.askResponse(osc, points: 1024)
            let shown = try Self.charted(page, after: 0)
            let atRest = rest.value(rest.left, at: 1000)
            report("web chart at 1 kHz after the tone (reported at rest \(String(format: "%.2f", atRest)) dB)", shown.left)
            #expect(abs(shown.left - atRest) <= 0.5, "at rest: chart \(shown.left) dB, SoundFit \(atRest) dB")
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
        }

        /// Every visible element whose own text is drawn in an error colour (the red of a failed
        /// update, an error, the banner), except the right ear's legend.
        static let redText = """
            const red = ['rgb(200, 32, 30)', 'rgb(179, 38, 30)'];
            return [...document.querySelectorAll('body *')].filter(e => {
              const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
              const style = getComputedStyle(e);
              return own && e.offsetParent !== null && (red.includes(style.color) || red.includes(style.backgroundColor))
                && !e.classList.contains('ear-right');
            }).map(e => (e.id || e.className || e.tagName) + ': ' + e.textContent.trim());
            """

        @Test("On load, with and without a profile, nothing reads as an error; screenshots at 1280 px and at phone width",
              arguments: [false, true])
        func load(withProfile: Bool) throws {
            let directory = try UniqueName.temporaryDirectory("sf-web-load")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let (rig, page) = try WebSurface.open(withProfile ? ["--profile", profile.path] : [])
            defer { page.quit(); rig.stop() }
            _ = try page.call("wait_meter", ["side": "input", "low": -1000, "high": 0])
            // Every first answer is in: the page's first /sync was answered and its chart is idle.
            try page.call("wait_until", ["source": "return document.body.dataset.answered === 'true'"
                + " && document.getElementById('response-chart').dataset.idle === 'true'"])
            let red = try page.call("evaluate", ["source": Self.redText]) as? [String]
            print("measured: red text on load: \(red ?? [])")
            #expect(red == [], "shown as errors on load: \(String(describing: red))")
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
            let name = withProfile ? "web-load-profile" : "web-load"
            try page.screenshot(name, full: true)
            try page.screenshot("\(name)-phone", width: 390, height: 844, full: true)
        }

        @Test("The units read dBFS, dB and Hz as written; each meter row keeps to one line at 1280 px; the gain reduction is one chart; nothing shows as an error on load")
        func unitsAndLayout() throws {
            let directory = try UniqueName.temporaryDirectory("sf-web-layout")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            let (rig, page) = try WebSurface.open(["--profile", profile.path, "--tech-level", "4"])
            defer { page.quit(); rig.stop() }
            // A loud tone: every meter reads, reduction bars stand (12 bands per ear at tech level 4).
            let audio = try rig.audio()
            try audio.startPlaying([Capture.tone(1000, amplitude: sineAmplitude(levelDBSPL: 85))])
            _ = try page.call("wait_meter", ["side": "output", "low": -60, "high": 0])
            // The reduction bars stand once the detectors settle: the page shows it.
            try page.call("wait_until", ["source":
                "return [...document.querySelectorAll('#reduction-chart rect')].some(b => Number(b.getAttribute('height')) > 0)"])

            // What a person reads (innerText applies CSS text-transform).
            let titles = try #require(try page.call("evaluate", ["source":
                "return [...document.querySelectorAll('#meters h3')].map(h => h.innerText)"]) as? [String])
            report("web meter titles: \(titles)", Double(titles.count), unit: "titles")
            #expect(titles.contains("Input: peak / RMS (dBFS)") && titles.contains("Output: peak / RMS (dBFS)"), "\(titles)")
            #expect(titles.contains("Gain reduction per band (dB)"), "\(titles)")
            let everything = try #require(try page.call("evaluate", ["source": "return document.body.innerText"]) as? String)
            for wrong in ["DBFS", "DB ", "HZ"] {
                #expect(!everything.contains(wrong), "the page reads \(wrong)")
            }

            // One line per meter row: label, bar and reading share a top and each is one line high.
            let rows = try #require(try page.call("evaluate", ["source": """
                const lineHeight = parseFloat(getComputedStyle(document.body).lineHeight);
                return [...document.querySelectorAll('#meters .meter')].map(row => {
                  const boxes = [...row.children].map(child => child.getBoundingClientRect());
                  return {text: row.innerText.replace(/\\s+/g, ' '), lineHeight,
                          tops: boxes.map(b => b.top), heights: boxes.map(b => b.height)};
                });
                """]) as? [[String: Any]])
            #expect(rows.count == 4, "\(rows.count) meter rows: \(rows)")  // two channels, input and output
            for row in rows {
                let heights = row["heights"] as? [Double] ?? [], tops = row["tops"] as? [Double] ?? []
                let lineHeight = row["lineHeight"] as? Double ?? 0
                let label = heights.first ?? 0, reading = heights.last ?? 0
                #expect(label <= lineHeight * 1.2 && reading <= lineHeight * 1.2, "wraps: \(row)")
                let centres = zip(tops, heights).map { $0 + $1 / 2 }
                #expect((centres.max() ?? 0) - (centres.min() ?? 0) <= 3, "not on one line: \(row)")
            }

            // The gain reduction: one chart, a bar per ear and band, not a column of rows.
            let reduction = try #require(try page.call("evaluate", ["source": """
                const chart = document.getElementById('reduction-chart');
                const bars = [...chart.querySelectorAll('rect')];
                return {left: bars.filter(b => b.classList.contains('ear-left')).length,
                        right: bars.filter(b => b.classList.contains('ear-right')).length,
                        standing: bars.filter(b => Number(b.getAttribute('height')) > 0).length,
                        height: chart.getBoundingClientRect().height,
                        labels: [...chart.querySelectorAll('.grid text')].map(t => t.textContent)};
                """]) as? [String: Any])
            report("web reduction chart: bars standing", Double(reduction["standing"] as? Int ?? 0), unit: "bars")
            #expect(reduction["left"] as? Int == 12 && reduction["right"] as? Int == 12, "\(reduction)")
            #expect((reduction["standing"] as? Int ?? 0) > 0, "no reduction shows with an 85 dB SPL tone: \(reduction)")
            #expect((reduction["height"] as? Double ?? 1000) <= 200, "\(reduction)")
            #expect((reduction["labels"] as? [String] ?? []).contains("1k"), "bars not labelled with their centres: \(reduction)")

            // Nothing on load is styled as an error: no error listed, no failed update state.
            #expect(try page.call("errors") as? [String] == [], "the page shows errors")
            let failed = try page.call("evaluate", ["source":
                "return [...document.querySelectorAll('[data-state=failed]')].map(e => e.textContent)"]) as? [String]
            #expect(failed == [], "\(String(describing: failed))")

            try page.screenshot("web-under-signal", full: true)
            try page.screenshot("web-under-signal-phone", width: 390, height: 844, full: true)
            try audio.stopPlaying()
        }
    }
}
