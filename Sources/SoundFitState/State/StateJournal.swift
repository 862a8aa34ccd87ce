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
///   commit, commits `state.json`, then removes the journal — or, when newer records were
///   appended meanwhile, replaces it (atomically, by a rename) with the newest one: at every
///   moment the journal's last record, if any, is at least as new as `state.json`.
/// - Appends are plain `write(2)`s (they survive the process; `state.json` is the fsynced copy
///   for power loss). An append that fails half-way (a full disk) is cut off again, so the
///   records after it stay readable. Mode 0600: the state holds a hearing profile.
///
/// Thread rules: one owner, the store's serial journal queue (loading happens before it starts).
final class StateJournal: @unchecked Sendable {
    static let fileName = "state.journal"
    private static let magic: [UInt8] = Array("SFJ1".utf8)

    let url: URL
    private var descriptor: Int32 = -1
    /// The last record appended by this process (framed), for `compact(keepingLast:)`.
    private var lastFrame: [UInt8]?

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

    /// Appends one record with one `write(2)`: when it returns, the record is in the kernel
    /// (a `kill -9` cannot lose it). Throws when the file cannot be opened or written; a partial
    /// record is cut off again (it would hide the records after it).
    func append(_ payload: Data) throws(FileError) {
        try open()
        let frame = Self.frame(payload)
        let end = lseek(descriptor, 0, SEEK_END)
        let written = frame.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == frame.count else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "only \(written) of \(frame.count) bytes written"
            if written > 0, end >= 0 { _ = ftruncate(descriptor, end) }
            Glibc.close(descriptor)
            descriptor = -1
            throw FileError("cannot append to \(url.path): \(reason)")
        }
        lastFrame = frame
    }

    /// Removes the journal (after `state.json` holds everything it recorded); the next append
    /// starts a new one.
    func remove() throws(FileError) {
        closeDescriptor()
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw FileError("cannot remove \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// After `state.json` was committed: removes the journal, or, with `keepingLast` (records
    /// newer than `state.json` were appended since its snapshot), replaces it with the last
    /// record appended, through a temporary file renamed over it (a crash leaves the old
    /// journal or the new one, both ending with that record). Not synced: the journal is for
    /// crashes of the process; `state.json` is the copy for power loss.
    func compact(keepingLast: Bool) throws(FileError) {
        guard keepingLast, let lastFrame else { return try remove() }
        closeDescriptor()
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(Self.fileName).tmp-\(getpid())")
        let fd = Glibc.open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError("cannot create \(temporary.path): \(String(cString: strerror(errno)))") }
        let written = lastFrame.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let reason = String(cString: strerror(errno))
        Glibc.close(fd)
        guard written == lastFrame.count else {
            unlink(temporary.path)
            throw FileError("cannot write \(temporary.path): \(written < 0 ? reason : "short write")")
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw FileError("cannot replace \(url.path): \(reason)")
        }
    }

    private func closeDescriptor() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// `"SFJ1"`, length, payload, CRC-32.
    private static func frame(_ payload: Data) -> [UInt8] {
        var frame = magic
        frame.reserveCapacity(payload.count + 12)
        frame += bigEndian(UInt32(payload.count))
        frame += payload
        frame += bigEndian(CRC32.checksum(payload))
        return frame
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
