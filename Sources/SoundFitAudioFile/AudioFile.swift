import CSndfile
import Foundation
import Glibc

/// The containers `soundfit render` reads and writes, through libsndfile.
public enum AudioFileFormat: String, CaseIterable, Sendable {
    case wav, flac, aiff

    /// The format an output file name asks for by its extension (`.wav`, `.flac`, `.aif`/`.aiff`).
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "aif", "aiff": self = .aiff
        default: return nil
        }
    }

    var majorFormat: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .aiff: Int32(SF_FORMAT_AIFF)
        }
    }
}

/// How samples are stored in a file (libsndfile's subtype): the bit depth a rendered file keeps.
public struct AudioSampleEncoding: Equatable, Sendable, CustomStringConvertible {
    let subtype: Int32

    public static let pcm16 = AudioSampleEncoding(subtype: Int32(SF_FORMAT_PCM_16))
    /// 24-bit integers: also what a file gets when it cannot hold the input's encoding (FLAC
    /// has no floating point).
    public static let pcm24 = AudioSampleEncoding(subtype: Int32(SF_FORMAT_PCM_24))
    public static let pcm32 = AudioSampleEncoding(subtype: Int32(SF_FORMAT_PCM_32))
    /// 32-bit floating point.
    public static let float = AudioSampleEncoding(subtype: Int32(SF_FORMAT_FLOAT))

    public var description: String {
        var info = SF_FORMAT_INFO()
        info.format = subtype
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
              let name = info.name else { return "subtype 0x\(String(subtype, radix: 16))" }
        return String(cString: name)
    }
}

/// What went wrong with an audio file; the message names the file and libsndfile's reason.
public struct AudioFileError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// An audio file opened for reading: WAV, FLAC, AIFF (and whatever else libsndfile reads).
/// Samples come as floats in ±1, one array per channel. One owner at a time; blocking I/O.
public final class AudioFileReader: @unchecked Sendable {
    public let path: String
    public let sampleRate: Int
    public let channelCount: Int
    /// Frames in the file.
    public let frameCount: Int
    /// The input's sample encoding (its bit depth).
    public let encoding: AudioSampleEncoding
    private var file: OpaquePointer?
    private var interleaved: [Float] = []

    public init(path: String) throws(AudioFileError) {
        self.path = path
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError("cannot read \(path): \(String(cString: sf_strerror(nil)))")
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw AudioFileError("cannot read \(path): no channels or no sample rate")
        }
        self.file = file
        sampleRate = Int(info.samplerate)
        channelCount = Int(info.channels)
        frameCount = Int(info.frames)
        encoding = AudioSampleEncoding(subtype: info.format & Int32(SF_FORMAT_SUBMASK))
    }

    deinit { close() }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }

    /// Reads up to `frames` frames, one array per channel; fewer at the end, none after it.
    public func read(frames: Int) throws(AudioFileError) -> [[Float]] {
        guard let file else { throw AudioFileError("\(path) is closed") }
        if interleaved.count < frames * channelCount { interleaved = [Float](repeating: 0, count: frames * channelCount) }
        let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frames)) }
        if read < 0 || (read == 0 && sf_error(file) != 0) {
            throw AudioFileError("cannot read \(path): \(String(cString: sf_strerror(file)))")
        }
        let count = Int(read), channels = channelCount
        return (0..<channels).map { channel in
            [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                for frame in 0..<count { buffer[frame] = interleaved[frame * channels + channel] }
                initialized = count
            }
        }
    }
}

/// An audio file written atomically: the samples go to a temporary file next to the target
/// (`.<name>.tmp-<pid>-<random>`), which `commit()` renames over it; `discard()` (or a writer
/// dropped without commit) removes it, so a failed render never leaves a partial file.
public final class AudioFileWriter: @unchecked Sendable {
    public let path: String
    public let format: AudioFileFormat
    public let encoding: AudioSampleEncoding
    public let channelCount: Int
    private let temporaryPath: String
    private var file: OpaquePointer?
    private var interleaved: [Float] = []

    /// Whether libsndfile can write `encoding` into `format` for this rate and channel count.
    public static func canWrite(_ format: AudioFileFormat, _ encoding: AudioSampleEncoding,
                                sampleRate: Int, channelCount: Int) -> Bool {
        var info = SF_INFO()
        info.format = format.majorFormat | encoding.subtype
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channelCount)
        return sf_format_check(&info) != 0
    }

    public init(path: String, format: AudioFileFormat, encoding: AudioSampleEncoding,
                sampleRate: Int, channelCount: Int) throws(AudioFileError) {
        self.path = path
        self.format = format
        self.encoding = encoding
        self.channelCount = channelCount
        let url = URL(fileURLWithPath: path)
        temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: .min ... .max))").path
        var info = SF_INFO()
        info.format = format.majorFormat | encoding.subtype
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channelCount)
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError("cannot write \(path): \(format.rawValue.uppercased()) cannot hold \(encoding) at \(sampleRate) Hz with \(channelCount) channels")
        }
        guard let file = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            throw AudioFileError("cannot write \(path): \(String(cString: sf_strerror(nil)))")
        }
        _ = soundfit_sf_set_clipping(file)
        self.file = file
    }

    deinit { discard() }

    /// Appends frames, one array per channel (equal lengths).
    public func write(_ channels: [[Float]]) throws(AudioFileError) {
        guard let file else { throw AudioFileError("\(path) is closed") }
        precondition(channels.count == channelCount, "one array per channel")
        let count = channels.first?.count ?? 0
        if interleaved.count < count * channelCount { interleaved = [Float](repeating: 0, count: count * channelCount) }
        for (channel, samples) in channels.enumerated() {
            for frame in 0..<count { interleaved[frame * channelCount + channel] = samples[frame] }
        }
        let written = interleaved.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(count)) }
        guard written == count else {
            throw AudioFileError("cannot write \(path): \(String(cString: sf_strerror(file)))")
        }
    }

    /// Finishes the file and renames it over `path`.
    public func commit() throws(AudioFileError) {
        guard let file else { throw AudioFileError("\(path) is closed") }
        self.file = nil
        sf_write_sync(file)
        guard sf_close(file) == 0 else {
            unlink(temporaryPath)
            throw AudioFileError("cannot write \(path): closing failed")
        }
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw AudioFileError("cannot write \(path): \(reason)")
        }
    }

    /// Drops the temporary file (nothing is written to `path`). Idempotent.
    public func discard() {
        guard let file else { return }
        self.file = nil
        sf_close(file)
        unlink(temporaryPath)
    }
}
