#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SoundFitDSP
import SoundFitHearing
import SoundFitModel
import SoundFitTestSupport

/// Throughput of the personalization processor per tech level, beside two Faust-compiled peers
/// (`Benchmarks/Faust`, loaded with dlopen, measured in the same run), and the cascade's group
/// delay.
///
/// The Swift processor runs in place on `channels` channels with a compressive preset (every band
/// +20 dB at 60 dB SPL, ratio 2 above 40 dB SPL, 2:1 expansion below 20 dB SPL, 105 dB SPL
/// limit), enabled at intensity 1, steady (no fade or ramp running). The Faust peers (one mono
/// instance per channel, `-O3 -ffast-math`): the same structure (analysis band-passes driving
/// co.compression_gain_mono and a cascade of fi.svf.bell with shelves, without SoundFit's gain
/// solve), and an LR4 crossover tree with a gain and co.compressor_mono per band.
struct PersonalizationBenchmarks {
    var runs = 7
    var channelCounts = [2, 8]
    var blockSizes = [64, 256]
    let sampleRate = 48000.0
    /// `Benchmarks/Faust/build.sh` output.
    var faustLibrary = "Benchmarks/Faust/.build/libsoundfit_faust.so"

    /// The standard audiograms of `hearing.md` as audiograms.
    static func standardAudiograms() -> [(String, Audiogram)] {
        StandardAudiogramLevels.all.map { name, hl in
            (name, try! Audiogram(points: zip(StandardAudiogramLevels.frequencies, hl).map {
                Audiogram.Point(frequency: $0, threshold: $1)
            }))
        }
    }

    static func preset(techLevel: Int) throws -> PresetPayload {
        let bands = MultibandLayout(techLevel: techLevel)!.bandCentres.map {
            BandDynamics(centre: $0, gain: 20, referenceLevel: 60, ratio: 2, knee: 40, expansionKnee: 20,
                         expansionRatio: 2, maximumGain: 40, outputLimit: 105)
        }
        return PresetPayload(techLevel: try TechLevel(techLevel), bands: bands)
    }

    /// The table row of the processor at `techLevel` on `path` (the baseline keeps the old name).
    static func rowName(_ techLevel: Int, _ path: SIMDPath) -> String {
        path == .baseline ? "SoundFit TL\(techLevel)" : "SoundFit TL\(techLevel), \(path.rawValue)"
    }

    private typealias FaustNew = @convention(c) (Int32, Int32) -> UnsafeMutableRawPointer?
    private typealias FaustCompute = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32,
                                                     UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?,
                                                     UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?) -> Void

    func run() -> String {
        var kernels = KernelBenchmarks()
        kernels.runs = runs
        var rows: [KernelBenchmarks.Row] = []
        // The Faust peers: the cascade (SoundFit's structure) and the crossover-tree compressor.
        var peers: [(name: String, new: FaustNew, compute: FaustCompute)] = []
        if let handle = dlopen(faustLibrary, RTLD_NOW) {
            for (name, prefix) in [("Faust cascade", "soundfit_faust_cascade"), ("Faust LR4 tree", "soundfit_faust")] {
                if let new = dlsym(handle, prefix + "_new"), let compute = dlsym(handle, prefix + "_compute") {
                    peers.append((name, unsafeBitCast(new, to: FaustNew.self), unsafeBitCast(compute, to: FaustCompute.self)))
                }
            }
        }
        for techLevel in 1...4 {
            for channels in channelCounts {
                for block in blockSizes {
                    let spec = ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: block, channelCount: channels)
                    // Both builds of the per-sample loops (`SIMDPath`) that this CPU runs, in one run.
                    for path in SIMDPath.allCases where path.isAvailable {
                        var processor = PersonalizationProcessor(
                            spec: spec, settings: PersonalizationSettings(isEnabled: true, intensity: 1), techLevel: techLevel,
                            simdPath: path)
                        let prepared = Unmanaged.passRetained(try! PreparedPersonalization(preset: Self.preset(techLevel: techLevel), sampleRate: sampleRate))
                        _ = processor.install(prepared)
                        let swift = kernels.measureInPlace(channels: channels, block: block) { buffers, n in
                            processor.process(buffers, frameCount: n)
                        }
                        rows.append(.init(kernel: Self.rowName(techLevel, path), channels: channels, block: block, nanosecondsPerSampleChannel: swift))
                        _ = processor.removePreset()
                        prepared.release()
                    }
                    for peer in peers {
                        let instances = (0..<channels).map { _ in peer.new(Int32(techLevel), Int32(sampleRate)) }
                        let io = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 1)
                        let value = kernels.measureInPlace(channels: channels, block: block) { buffers, n in
                            for c in 0..<channels {
                                io.pointee = buffers[c]
                                peer.compute(instances[c], Int32(techLevel), Int32(n), io, io)
                            }
                        }
                        io.deallocate()
                        for instance in instances { free(instance) }
                        rows.append(.init(kernel: "\(peer.name) TL\(techLevel)", channels: channels, block: block, nanosecondsPerSampleChannel: value))
                    }
                }
            }
        }
        var out = KernelBenchmarks.table(rows)
        let columns = channelCounts.flatMap { c in blockSizes.map { (c, $0) } }
        if SIMDPath.avx2FMA.isAvailable {
            for techLevel in 1...4 {
                let baseName = Self.rowName(techLevel, .baseline), wideName = Self.rowName(techLevel, .avx2FMA)
                let ratios: [String] = columns.map { c, b in
                    let base = rows.first { $0.kernel == baseName && $0.channels == c && $0.block == b }!
                    let wide = rows.first { $0.kernel == wideName && $0.channels == c && $0.block == b }!
                    return String(format: "%.2f", wide.nanosecondsPerSampleChannel / base.nanosecondsPerSampleChannel)
                }
                out += "| \(wideName) / baseline | " + ratios.joined(separator: " | ") + " |\n"
            }
        }
        for peer in peers {
            for techLevel in 1...4 {
                out += "| \(peer.name) / SoundFit TL\(techLevel) | " + columns.map { c, b in
                    let s = rows.first { $0.kernel == "SoundFit TL\(techLevel)" && $0.channels == c && $0.block == b }!
                    let f = rows.first { $0.kernel == "\(peer.name) TL\(techLevel)" && $0.channels == c && $0.block == b }!
                    return String(format: "%.1f", f.nanosecondsPerSampleChannel / s.nanosecondsPerSampleChannel)
                }.joined(separator: " | ") + " |\n"
            }
        }
        if peers.isEmpty { out += "\n(Faust peers not built: run Benchmarks/Faust/build.sh)\n" }
        if !SIMDPath.avx2FMA.isAvailable { out += "\n(this CPU lacks AVX2 or FMA: only the baseline path ran)\n" }
        out += "\nGroup delay of the cascade (ms, analytic, equal to the impulse-response measurement in the tests) "
            + "at the NAL-R gains of the standard audiograms (Bisgaard et al. 2010): N3, and the largest over N1–N5 and S1–S3:\n\n"
        out += "| tech level | bands | N3 1 kHz | N3 2 kHz | N3 4 kHz | largest 1 kHz | largest 2 kHz | largest 4 kHz |\n"
            + "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        let audiograms = Self.standardAudiograms()
        for techLevel in 1...4 {
            let equalizer = MultibandEqualizer(techLevel: techLevel, sampleRate: sampleRate)!
            let delays = audiograms.map { name, audiogram in
                let gains = equalizer.layout.bandCentres.map { NALPrescription.insertionGain(for: audiogram, at: $0) }
                return (name, [1000.0, 2000, 4000].map { equalizer.groupDelay(atFrequency: $0, bandGains: gains) * 1000 })
            }
            let n3 = delays.first { $0.0 == "N3" }!.1
            let largest = (0..<3).map { i in delays.map { $0.1[i] }.max()! }
            out += "| \(techLevel) | \(equalizer.layout.bandCount) | "
                + (n3 + largest).map { String(format: "%.3f", $0) }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
