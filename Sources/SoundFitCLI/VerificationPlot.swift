import Foundation
import SoundFit

/// The plot of `soundfit verify --plot`: one row per ear; on the left the insertion gain per
/// band against frequency (log axis), target dashed and measured solid, one colour per speech
/// level (55 blue, 65 green, 80 red); on the right the input-output curves of the pure-tone
/// sweep, one colour per band, target dashed and measured solid. Any thread.
struct VerificationPlot {
    var report: FittingVerification.Report
    static let width = 1200, height = 800

    static let levelColours: [Double: Canvas.Colour] = [55: (30, 90, 220), 65: (20, 150, 60), 80: (210, 40, 40)]

    func png() -> [UInt8] {
        var canvas = Canvas(width: Self.width, height: Self.height)
        canvas.text("SOUNDFIT VERIFY  TECH LEVEL \(report.techLevel)  INTENSITY \(String(format: "%.2f", report.intensity))  "
                    + (report.passes ? "PASS" : "FAIL"), x: 20, y: 10, scale: 3, report.passes ? (0, 120, 0) : (200, 0, 0))
        for (row, ear) in [Ear.left, .right].enumerated() {
            let top = 60 + row * 370
            drawGains(&canvas, ear: ear, frame: (x: 90, y: top, width: 470, height: 300))
            drawCurves(&canvas, ear: ear, frame: (x: 690, y: top, width: 470, height: 300))
        }
        // Legend of the speech levels.
        var x = 90
        for level in FittingVerification.speechLevels {
            let colour = Self.levelColours[level] ?? (0, 0, 0)
            canvas.line(Double(x), 785, Double(x + 30), 785, colour, thickness: 3)
            canvas.text("\(Int(level)) DB SPL", x: x + 38, y: 780, scale: 2)
            x += 170
        }
        canvas.text("DASHED: TARGET  SOLID: MEASURED", x: 640, y: 780, scale: 2)
        return PNGEncoder.encode(width: canvas.width, height: canvas.height, rgb: canvas.rgb)
    }

    typealias Frame = (x: Int, y: Int, width: Int, height: Int)

    private func drawGains(_ canvas: inout Canvas, ear: Ear, frame: Frame) {
        let results = report.speech.filter { $0.ear == ear }
        let values = results.flatMap { $0.bands.flatMap { [$0.target, $0.measured] } }
        let (low, high) = Self.range(values, step: 10)
        let xMin = log2(200.0), xMax = log2(12000.0)
        func px(_ f: Double) -> Double { Double(frame.x) + (log2(f) - xMin) / (xMax - xMin) * Double(frame.width) }
        func py(_ g: Double) -> Double { Double(frame.y + frame.height) - (g - low) / (high - low) * Double(frame.height) }
        axes(&canvas, frame: frame, title: "\(ear.rawValue) EAR: INSERTION GAIN (DB) VS FREQUENCY (HZ)",
             xTicks: [250, 500, 1000, 2000, 4000, 8000].map { (px($0), $0 >= 1000 ? "\(Int($0 / 1000))K" : "\(Int($0))") },
             yTicks: stride(from: low, through: high, by: 10).map { (py($0), "\(Int($0))") })
        for result in results {
            let colour = Self.levelColours[result.level] ?? (0, 0, 0)
            for (a, b) in zip(result.bands, result.bands.dropFirst()) {
                canvas.line(px(a.centre), py(a.target), px(b.centre), py(b.target), colour, thickness: 1, dash: 6)
                canvas.line(px(a.centre), py(a.measured), px(b.centre), py(b.measured), colour, thickness: 3)
            }
            for band in result.bands {
                canvas.fill(x: Int(px(band.centre)) - 3, y: Int(py(band.measured)) - 3, width: 7, height: 7,
                            band.passes ? colour : (0, 0, 0))
            }
        }
    }

    private func drawCurves(_ canvas: inout Canvas, ear: Ear, frame: Frame) {
        let curves = report.tones.filter { $0.ear == ear }
        guard !curves.isEmpty else {
            canvas.text("NO TONE SWEEP", x: frame.x + 20, y: frame.y + frame.height / 2)
            return
        }
        let (low, high) = Self.range(curves.flatMap { $0.targets + $0.measured }, step: 10)
        let inputs = FittingVerification.toneLevels
        let xMin = inputs.first!, xMax = inputs.last!
        func px(_ l: Double) -> Double { Double(frame.x) + (l - xMin) / (xMax - xMin) * Double(frame.width) }
        func py(_ l: Double) -> Double { Double(frame.y + frame.height) - (l - low) / (high - low) * Double(frame.height) }
        axes(&canvas, frame: frame, title: "\(ear.rawValue) EAR: TONE OUTPUT VS INPUT (DB SPL)",
             xTicks: stride(from: xMin, through: xMax, by: 10).map { (px($0), "\(Int($0))") },
             yTicks: stride(from: low, through: high, by: 10).map { (py($0), "\(Int($0))") })
        for (index, curve) in curves.enumerated() {
            let t = curves.count > 1 ? Double(index) / Double(curves.count - 1) : 0
            let colour: Canvas.Colour = (UInt8(40 + 200 * t), UInt8(60 + 60 * (1 - abs(2 * t - 1))), UInt8(230 - 200 * t))
            for i in 1..<curve.inputs.count where i < curve.measured.count {
                canvas.line(px(curve.inputs[i - 1]), py(curve.targets[i - 1]), px(curve.inputs[i]), py(curve.targets[i]),
                            colour, thickness: 1, dash: 5)
                canvas.line(px(curve.inputs[i - 1]), py(curve.measured[i - 1]), px(curve.inputs[i]), py(curve.measured[i]),
                            colour, thickness: 2)
            }
            let label = curve.centre >= 1000 ? String(format: "%gK", (curve.centre / 100).rounded() / 10) : "\(Int(curve.centre))"
            canvas.text(label, x: frame.x + frame.width + 6, y: Int(py(curve.measured.last ?? low)) - 5, scale: 1, colour)
        }
    }

    private func axes(_ canvas: inout Canvas, frame: Frame, title: String, xTicks: [(Double, String)], yTicks: [(Double, String)]) {
        let grey: Canvas.Colour = (225, 225, 225), black: Canvas.Colour = (0, 0, 0)
        let bottom = Double(frame.y + frame.height), right = Double(frame.x + frame.width)
        for (x, label) in xTicks {
            canvas.line(x, Double(frame.y), x, bottom, grey)
            canvas.text(label, x: Int(x) - Canvas.textWidth(label) / 2, y: Int(bottom) + 8)
        }
        for (y, label) in yTicks {
            canvas.line(Double(frame.x), y, right, y, grey)
            canvas.text(label, x: frame.x - 10 - Canvas.textWidth(label), y: Int(y) - 5)
        }
        canvas.line(Double(frame.x), Double(frame.y), Double(frame.x), bottom, black, thickness: 2)
        canvas.line(Double(frame.x), bottom, right, bottom, black, thickness: 2)
        canvas.text(title, x: frame.x, y: frame.y - 22)
    }

    /// `values`' range widened to multiples of `step` (at least one step).
    static func range(_ values: [Double], step: Double) -> (Double, Double) {
        let finite = values.filter(\.isFinite)
        guard let minimum = finite.min(), let maximum = finite.max() else { return (0, step) }
        let low = (minimum / step).rounded(.down) * step, high = (maximum / step).rounded(.up) * step
        return (low, max(high, low + step))
    }
}
