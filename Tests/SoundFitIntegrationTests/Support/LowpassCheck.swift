import Testing

extension Capture {
    /// Checks a capture of the 250 Hz + 4 kHz mix (−20 dBFS each) through a 1 kHz lowpass
    /// (`/filter/cutoff 1000`, the "Lowpass 1 kHz" patch): in every channel 4 kHz down by at
    /// least 20 dB and 250 Hz within 0.5 dB. Reports both levels as "`label`: 4 kHz chN" and
    /// "`label`: 250 Hz chN"; returns them, a channel an entry.
    @discardableResult
    static func expectLowpass1kHz(_ captured: [[Float]], report label: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) -> [(high: Double, low: Double)] {
        var levels: [(high: Double, low: Double)] = []
        for (channel, samples) in captured.enumerated() {
            let high = toneLevel(samples, frequency: 4000)
            let low = toneLevel(samples, frequency: 250)
            report("\(label): 4 kHz ch\(channel + 1)", high)
            report("\(label): 250 Hz ch\(channel + 1)", low)
            #expect(high <= -20, "ch\(channel + 1): 4 kHz at \(high) dB", sourceLocation: sourceLocation)
            #expect(abs(low) <= 0.5, "ch\(channel + 1): 250 Hz at \(low) dB", sourceLocation: sourceLocation)
            levels.append((high, low))
        }
        return levels
    }
}
