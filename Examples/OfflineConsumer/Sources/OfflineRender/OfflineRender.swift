import Foundation
import SoundFitDSP
import SoundFitEngine

/// Renders one second of a 5 kHz tone through SoundFit's processing chain with a 1 kHz
/// lowpass, offline on arrays, and prints how much the filter took away.
@main
struct OfflineRender {
    static func main() {
        let sampleRate = 48_000.0
        let settings = ChainSettings(filter: FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1000))
        let engine = AudioEngine(settings: settings)
        var driver = InMemoryDriver(engine: engine, sampleRate: sampleRate, blockSize: 256, channelCount: 2)

        let tone = (0..<Int(sampleRate)).map { frame in
            Float(0.5 * sin(2 * Double.pi * 5000 * Double(frame) / sampleRate))
        }
        let output = driver.render([tone, tone]).outputs

        // Skip the first 100 ms, while the filter settles.
        let settled = Int(sampleRate) / 10..<Int(sampleRate)
        let attenuation = 20 * log10(rms(output[0][settled]) / rms(tone[settled]))
        print("5000 Hz through a 1000 Hz lowpass: \(String(format: "%.1f", attenuation)) dB")
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        (samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }
}
