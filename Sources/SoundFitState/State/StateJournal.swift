import Foundation
import Glibc

/// The write-ahead journal of the durable state (`state.journal`): every applied change reaches
/// the disk within a few milliseconds as one appended record, long before the debounced rewrite
/// of `state.json`, so a `kill -9` in the middle of a fader burst loses nothing reported applied.
///
/// - A record is a whole state document (without the informational presets), framed as
///   `"SFJ1"`, UInt32 length, the document's JSON, UInt32 CRC-32 of the JSON (big-endian). A
///   record torn by a crash fails its length or checksum and is ignored.
/// - Records are appended in submission order, so the last complete record is the newest state.
/// - Compaction (`DurableStateStore` writing `state.json`) appends the document it is about to
///   commit, commits `state.json`, then removes the journal: at every moment the journal's
///   last record, if any, is at least as new as `state.json`.
/// - Appends are plain `write(2)`s (they survive the process; `state.json` is the fsynced copy
///   for power loss). Mode 0600: the state holds a hearing profile.
///
/// Thread rules: one owner, the store's serial writer queue (loading happens before it starts).
final class StateJournal: @unchecked Sendable {
    static let fileName = "state.journal"
    private static let magic: [UInt8] = Array("SFJ1".utf8)

    let url: URL
    private var descriptor: Int32 = -1

    init(directory: URL) {
        url = directory.appendingPathComponent(Self.fileName)
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// The payload of the last complete record, if any. Blocking file I/O.
    func lastRecord() -> Data? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let bytes = [UInt8](data)
        var offset = 0
        var last: Data?
        while offset + 12 <= bytes.count, Array(bytes[offset..<offset + 4]) == Self.magic {
            let length = Int(Self.uint32(bytes, at: offset + 4))
            let end = offset + 8 + length + 4
            guard length >= 0, end <= bytes.count else { break }
            let payload = bytes[(offset + 8)..<(offset + 8 + length)]
            guard Self.uint32(bytes, at: offset + 8 + length) == CRC32.checksum(payload) else { break }
            last = Data(payload)
            offset = end
        }
        return last
    }

    /// Appends one record. Throws when the file cannot be opened or written.
    func append(_ payload: Data) throws(FileError) {
        try open()
        var frame = Self.magic
        frame += Self.bigEndian(UInt32(payload.count))
        frame += payload
        frame += Self.bigEndian(CRC32.checksum(payload))
        let written = frame.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == frame.count else {
            let reason = String(cString: strerror(errno))
            // A partial record would hide the ones after it: cut it off again.
            Glibc.close(descriptor)
            descriptor = -1
            throw FileError("cannot append to \(url.path): \(reason)")
        }
    }

    /// Removes the journal (after `state.json` holds everything it recorded); the next append
    /// starts a new one.
    func remove() throws(FileError) {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw FileError("cannot remove \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    private func open() throws(FileError) {
        guard descriptor < 0 else { return }
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = Glibc.open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError("cannot open \(url.path): \(String(cString: strerror(errno)))") }
        descriptor = fd
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// CRC-32 (IEEE 802.3, the zlib polynomial), for the journal's records.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
