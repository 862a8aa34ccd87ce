import ArgumentParser
import Foundation
import Logging
import SoundFit
import SoundFitAudioFile

/// `soundfit render INPUT OUTPUT`: processes a file offline, through the same chain and with
/// the same settings as `soundfit run`, without a JACK server (see `OfflineSoundFit`).
struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Process an audio file offline (no JACK server) through SoundFit's chain.",
        discussion: """
            Settings are applied in this order, as a running SoundFit would take them: the full
            state of --state-dir (else the defaults), --profile (or --audiogram), --patch, then
            every --set.
            The output has the input's sample rate and channels (channels 1+2 are the left and
            right ear, 3+4 again; a mono file is the left ear) and, unless it cannot hold it,
            its sample encoding. Before the input, the chain starts settled: filters cleared,
            ramps at their targets, then 10 s of silence (not written) for the level detectors.
            The output file appears only when rendering succeeded (written to a temporary file,
            then renamed).
            """)

    @Argument(help: "Audio file to process (WAV, FLAC, AIFF).")
    var input: String

    @Argument(help: "File to write; its extension (.wav, .flac, .aif, .aiff) picks the format unless --format is given.")
    var output: String

    @Option(help: "Output format: wav, flac or aiff (default: from the output's extension).")
    var format: String?

    @OptionGroup var fitting: OfflineFittingOptions

    @OptionGroup var levels: ChainLevelOptions

    func validate() throws {
        _ = try outputFormat()
    }

    /// The output format: `--format`, else the output's extension.
    private func outputFormat() throws -> AudioFileFormat {
        if let format {
            guard let chosen = AudioFileFormat(rawValue: format.lowercased()) else {
                throw ValidationError("--format must be one of wav, flac, aiff, got '\(format)'")
            }
            return chosen
        }
        let pathExtension = URL(fileURLWithPath: output).pathExtension
        guard let chosen = AudioFileFormat(pathExtension: pathExtension) else {
            throw ValidationError("cannot tell the format of \(output) from its extension: name it .wav, .flac or .aiff, or pass --format")
        }
        return chosen
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let logger = Logger(label: "soundfit")
        let format = try outputFormat()

        let reader: AudioFileReader
        do {
            reader = try AudioFileReader(path: input)
        } catch {
            throw CLIError(error.description)
        }
        guard DocumentSettings.channelRange.contains(reader.channelCount) else {
            throw CLIError("\(input) has \(reader.channelCount) channels; SoundFit processes 1…64")
        }
        var encoding = reader.encoding
        if !AudioFileWriter.canWrite(format, encoding, sampleRate: reader.sampleRate, channelCount: reader.channelCount) {
            encoding = .pcm24
            FileHandle.standardError.write(Data("note: \(format.rawValue.uppercased()) cannot hold \(reader.encoding); writing \(encoding)\n".utf8))
        }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: output, format: format, encoding: encoding,
                                         sampleRate: reader.sampleRate, channelCount: reader.channelCount)
        } catch {
            throw CLIError(error.description)
        }

        let soundfit = try makeSoundFit(sampleRate: reader.sampleRate, channelCount: reader.channelCount, logger: logger)
        for warning in soundfit.warnings { logger.warning("\(warning)") }
        do {
            try await soundfit.configure()
        } catch {
            throw CLIError("\(error)")
        }
        let progress = RenderProgress(totalFrames: reader.frameCount, sampleRate: reader.sampleRate)
        let rendered: Int
        do {
            rendered = try await onThreadOfItsOwn {
                soundfit.settle()
                progress.start()
                var frames = 0
                while true {
                    let block = try reader.read(frames: 16384)
                    guard let count = block.first?.count, count > 0 else { break }
                    try writer.write(soundfit.render(block))
                    frames += count
                    progress.update(frames: frames)
                }
                return frames
            }
            try writer.commit()
        } catch let error as AudioFileError {
            throw CLIError(error.description)
        }
        progress.finish(frames: rendered)
    }

    /// SoundFit configured from the flags (see `OfflineChainSetup`).
    private func makeSoundFit(sampleRate: Int, channelCount: Int, logger: Logger) throws -> OfflineSoundFit {
        try fitting.setup(levels: levels).make(sampleRate: sampleRate, channelCount: channelCount, logger: logger)
    }
}

/// Runs `body` on a new thread and returns its result: the rendering loop flushes denormals on
/// its thread, which must not be one of Swift concurrency's shared threads.
func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "soundfit render"
        thread.start()
    }
}

/// `--set /address=value`: the value text read as an OSC argument (`true`/`false`, an integer,
/// a decimal number, else a name), then checked by the parameter's entry exactly as an OSC set.
enum ParameterAssignment {
    static func parse(_ text: String) throws -> (address: String, value: ParameterValue) {
        guard let equals = text.firstIndex(of: "="), text.hasPrefix("/") else {
            throw CLIError("expected /address=value")
        }
        let address = String(text[..<equals]), valueText = String(text[text.index(after: equals)...])
        let normalizedTarget = FaderTaper.parameterAddress(forNormalized: address)
        guard let descriptor = ParameterModel.entry(at: address) ?? normalizedTarget.flatMap(ParameterModel.entry(at:)) else {
            throw ParameterError.unknownAddress(address)
        }
        let normalized = ParameterModel.entry(at: address) == nil
        let value = try descriptor.requestedValue(from: argument(valueText, for: descriptor.kind), normalized: normalized)
        try descriptor.validate(value)
        return (descriptor.address, value)
    }

    /// The OSC argument a value text stands for: a name for a choice; otherwise `true`/`false`,
    /// an integer, a decimal number, else the text itself (which a number parameter refuses).
    static func argument(_ text: String, for kind: ParameterKind) -> OSCArgument {
        if case .choice = kind { return .string(text) }
        switch text.lowercased() {
        case "true": return .bool(true)
        case "false": return .bool(false)
        default: break
        }
        if let integer = Int32(text) { return .int32(integer) }
        if let number = Double(text) { return .double(number) }
        return .string(text)
    }
}

/// The progress bar on a terminal (standard error is a TTY), nothing otherwise, and the
/// closing line with the real-time factor.
final class RenderProgress: @unchecked Sendable {
    private let totalFrames: Int
    private let sampleRate: Int
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var started = ContinuousClock.now
    private var lastDrawn = -1

    init(totalFrames: Int, sampleRate: Int) {
        self.totalFrames = totalFrames
        self.sampleRate = sampleRate
    }

    func start() { started = .now }

    func update(frames: Int) {
        guard isTerminal, totalFrames > 0 else { return }
        let percent = min(100, frames * 100 / totalFrames)
        guard percent != lastDrawn else { return }
        lastDrawn = percent
        let width = 30, filled = percent * width / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\rrendering [\(bar)] \(percent)%".utf8))
    }

    /// `rendered 12.0 s in 0.21 s (57× real time)` on standard output.
    func finish(frames: Int) {
        if isTerminal, totalFrames > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
        let elapsed = (ContinuousClock.now - started).seconds
        let audio = Double(frames) / Double(sampleRate)
        let factor = elapsed > 0 ? audio / elapsed : .infinity
        print(String(format: "rendered %.1f s in %.2f s (%.0f× real time)", audio, elapsed, factor))
    }
}
