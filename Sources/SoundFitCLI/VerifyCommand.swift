import ArgumentParser
import Foundation
import Logging
import SoundFit

/// `soundfit verify`: the verification a fitter runs on the current fitting, offline
/// through the chain `soundfit render` uses (see `FittingVerification`). Exits 1 when a band
/// misses its target by more than its tolerance, with the bands named.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the fitting: speech-shaped noise at 55/65/80 dB SPL, insertion gain per band vs the prescription.",
        discussion: """
            Renders speech-shaped noise (Byrne et al. 1994 LTASS) at 55, 65 and 80 dB SPL through
            the fitting, offline at 48 kHz, both ears at once, and measures the insertion gain per
            band (±1/6 octave around each band centre). The target is what the default preset's
            gain law prescribes for the band's level of that speech, at the current intensity (at
            65 dB SPL and intensity 1: the NAL-RP gain). Then pure tones at the band centres from
            40 to 100 dB SPL give the input-output curves.
            The fitting is built as `soundfit render` builds it: --state-dir, then the session
            (--tech-level), the hearing profile (--profile or --audiogram), --patch, every --set.
            Exit status: 0 when every band is within 1 dB to 4 kHz (2 dB to 6 kHz; bands above 6 kHz are reported, not judged) at every level, 1
            when one is not, 64 on bad input.
            """)

    @OptionGroup var fitting: OfflineFittingOptions

    @Option(help: "Write the curves as a PNG plot to this file, and the numbers as CSV beside it (same name, .csv).")
    var plot: String?

    @Flag(help: "Skip the pure-tone sweep (input-output curves).")
    var noTones = false

    @OptionGroup var levels: ChainLevelOptions

    func validate() throws {
        if let plot, URL(fileURLWithPath: plot).pathExtension.lowercased() != "png" {
            throw ValidationError("--plot must name a .png file, got '\(plot)'")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "soundfit")
        let soundfit = try fitting.setup(levels: levels).make(sampleRate: FittingVerification.sampleRate, channelCount: 2, logger: logger)
        for warning in soundfit.warnings { logger.warning("\(warning)") }
        do {
            try await soundfit.configure()
        } catch {
            throw CLIError("\(error)")
        }
        let includeTones = !noTones
        let report: FittingVerification.Report
        do {
            report = try await onThreadOfItsOwn { try FittingVerification.run(soundfit, includeTones: includeTones) }
        } catch let failure as FittingVerification.Failure {
            throw CLIError(failure.description)
        }
        print(report.table)
        if let plot {
            let csvPath = URL(fileURLWithPath: plot).deletingPathExtension().appendingPathExtension("csv").path
            do {
                try atomicWrite(Data(VerificationPlot(report: report).png()), to: plot)
                try atomicWrite(Data(report.csv.utf8), to: csvPath)
            } catch {
                throw CLIError("cannot write the plot: \(error.localizedDescription)")
            }
            print("plot: \(plot)\nnumbers: \(csvPath)")
        }
        if !report.passes { throw ExitCode(1) }
    }

    /// Writes `data` to a temporary file beside `path`, then renames it: the file appears whole or not at all.
    private func atomicWrite(_ data: Data, to path: String) throws {
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
