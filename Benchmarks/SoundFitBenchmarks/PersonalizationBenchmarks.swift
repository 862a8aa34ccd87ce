#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SoundFitDSP

/// Throughput of the personalization processor per tech level, beside the Faust-compiled
/// equivalent (`Benchmarks/Faust`, loaded with dlopen, measured in the same run), and the
/// filterbank's group delay.
///
/// The Swift processor runs in place on `channels` channels with a compressive preset (every band
/// +20 dB at 60 dB SPL, ratio 2 above 40 dB SPL, 2:1 expansion below 20 dB SPL, 105 dB SPL
/// limit), enabled at intensity 1, steady (no fade or ramp running). The Faust peer is one mono
/// instance per channel of the same tree (fi.crossover2LR4 + fi.svf.ap) with a gain and
/// co.compressor_mono per band, `-O3 -ffast-math`.
struct PersonalizationBenchmarks {
    var runs = 7
    var channelCounts = [2, 8]
    var blockSizes = [64, 256]
    let sampleRate = 48000.0
    /// `Benchmarks/Faust/build.sh` output.
    var faustLibrary = "Benchmarks/Faust/.build/libsoundfit_faust.so"

    static func preset(techLevel: Int) -> MultibandPreset {
        let bands = MultibandLayout(techLevel: techLevel)!.bandCentres.map {
            BandDynamics(centre: $0, gain: 20, referenceLevel: 60, ratio: 2, knee: 40, expansionKnee: 20,
                         expansionRatio: 2, maximumGain: 40, outputLimit: 105)
        }
        return MultibandPreset(techLevel: techLevel, bands: bands)
    }

    private typealias FaustNew = @convention(c) (Int32, Int32) -> UnsafeMutableRawPointer?
    private typealias FaustCompute = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32,
                                                     UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?,
                                                     UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?) -> Void

    func run() -> String {
        var kernels = KernelBenchmarks()
        kernels.runs = runs
        var rows: [KernelBenchmarks.Row] = []
        var faust: (FaustNew, FaustCompute)?
        if let handle = dlopen(faustLibrary, RTLD_NOW), let new = dlsym(handle, "soundfit_faust_new"),
           let compute = dlsym(handle, "soundfit_faust_compute") {
            faust = (unsafeBitCast(new, to: FaustNew.self), unsafeBitCast(compute, to: FaustCompute.self))
        }
        for techLevel in 1...4 {
            for channels in channelCounts {
                for block in blockSizes {
                    let spec = ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: block, channelCount: channels)
                    var processor = PersonalizationProcessor(
                        spec: spec, settings: PersonalizationSettings(isEnabled: true, intensity: 1), techLevel: techLevel)
                    let prepared = Unmanaged.passRetained(try! PreparedPersonalization(preset: Self.preset(techLevel: techLevel), sampleRate: sampleRate))
                    _ = processor.install(prepared)
                    let swift = kernels.measureInPlace(channels: channels, block: block) { buffers, n in
                        processor.process(buffers, frameCount: n)
                    }
                    rows.append(.init(kernel: "SoundFit TL\(techLevel)", channels: channels, block: block, nanosecondsPerSampleChannel: swift))
                    _ = processor.removePreset()
                    prepared.release()
                    if let (new, compute) = faust {
                        let instances = (0..<channels).map { _ in new(Int32(techLevel), Int32(sampleRate)) }
                        let io = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 1)
                        let value = kernels.measureInPlace(channels: channels, block: block) { buffers, n in
                            for c in 0..<channels {
                                io.pointee = buffers[c]
                                compute(instances[c], Int32(techLevel), Int32(n), io, io)
                            }
                        }
                        io.deallocate()
                        for instance in instances { free(instance) }
                        rows.append(.init(kernel: "Faust TL\(techLevel)", channels: channels, block: block, nanosecondsPerSampleChannel: value))
                    }
                }
            }
        }
        var out = KernelBenchmarks.table(rows)
        if faust == nil { out += "\n(Faust peer not built: run Benchmarks/Faust/build.sh)\n" }
        let columns = channelCounts.flatMap { c in blockSizes.map { (c, $0) } }
        if faust != nil {
            for techLevel in 1...4 {
                out += "| Faust / SoundFit TL\(techLevel) | " + columns.map { c, b in
                    let s = rows.first { $0.kernel == "SoundFit TL\(techLevel)" && $0.channels == c && $0.block == b }!
                    let f = rows.first { $0.kernel == "Faust TL\(techLevel)" && $0.channels == c && $0.block == b }!
                    return String(format: "%.1f", f.nanosecondsPerSampleChannel / s.nanosecondsPerSampleChannel)
                }.joined(separator: " | ") + " |\n"
            }
        }
        out += "\nGroup delay of the filterbank (ms, analytic, equal to the impulse-response measurement in the tests):\n\n"
        out += "| tech level | bands | 1 kHz | 2 kHz | 4 kHz |\n| --- | ---: | ---: | ---: | ---: |\n"
        for techLevel in 1...4 {
            let bank = MultibandFilterbank(techLevel: techLevel, sampleRate: sampleRate)!
            out += "| \(techLevel) | \(bank.layout.bandCount) | " + [1000.0, 2000, 4000].map {
                String(format: "%.3f", bank.groupDelay(atFrequency: $0) * 1000)
            }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
