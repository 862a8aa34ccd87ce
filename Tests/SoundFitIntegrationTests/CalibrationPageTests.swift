import Foundation
import Testing

extension SoundFitIntegration {
    /// The page's calibration section in Chromium: choose ear, frequency and level, play, enter
    /// the meter's reading, see the table; the tone measured through JACK and the table checked
    /// over UDP OSC. Its screenshot: `.build/screenshots/web-calibration.png`.
    @Suite("Calibration on the page") struct CalibrationPage {
        @Test("The page plays the calibration tone (measured through JACK), records a reading and shows the table")
        func pageCalibrates() throws {
            let (rig, page) = try WebSurface.open()
            defer { page.quit(); rig.stop() }
            let osc = rig.osc
            let audio = try rig.audio()

            try page.call("set_field", ["selector": "#calibration-ear", "value": "right"])
            try page.call("set_field", ["selector": "#calibration-hz", "value": "2000"])
            try page.call("set_field", ["selector": "#calibration-level", "value": "80"])
            try page.call("click", ["selector": "#calibration-play"])
            _ = try page.call("wait_text", ["selector": "#calibration-state", "contains": "playing right 2000 Hz at 80 dB SPL"])
            let level = try CalibrationThroughJack.measurePlaying(audio, hz: 2000)
            report("page: calibration tone right 2 kHz 80 dB SPL, re −20 dBFS", level.right)
            #expect(abs(level.right) <= 0.2 && level.left < -80, "\(level)")

            try page.call("set_field", ["selector": "#calibration-reading", "value": "83.5"])
            try page.call("click", ["selector": "#calibration-measured"])
            _ = try page.call("wait_text", ["selector": "#calibration-state", "contains": "correction 3.5 dB kept"])
            _ = try page.call("wait_text", ["selector": "#calibration-rows", "contains": "+3.5 dB"])
            _ = try page.call("wait_text", ["selector": "#calibration-empty", "contains": "1 correction"])
            #expect(try CalibrationThroughJack.corrections(osc, "right") == [2000: 3.5])
            let corrected = try CalibrationThroughJack.measurePlaying(audio, hz: 2000)
            #expect(abs(corrected.right + 3.5) <= 0.5, "\(corrected)")
            try page.screenshot("web-calibration", full: true)

            // A refusal shows on the page: a level above the output safety limit.
            try page.call("set_field", ["selector": "#calibration-level", "value": "120"])
            try page.call("click", ["selector": "#calibration-play"])
            _ = try page.call("wait_text", ["selector": "#calibration-state", "contains": "output safety limit"])

            try page.call("click", ["selector": "#calibration-stop"])
            _ = try page.call("wait_text", ["selector": "#calibration-state", "contains": "stopped"])
            try page.call("click", ["selector": "#calibration-reset"])
            _ = try page.call("wait_text", ["selector": "#calibration-empty", "contains": "No corrections"])
            #expect(try CalibrationThroughJack.corrections(osc, "right").isEmpty)
        }
    }
}
