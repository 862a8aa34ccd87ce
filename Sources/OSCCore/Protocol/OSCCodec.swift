import CLiblo
import Foundation

/// Encodes and decodes OSC packets. Messages go through liblo (`lo_message_deserialise`,
/// `lo_message_serialise`), those with the two tags liblo lacks (`r`, arrays) too, retagged;
/// bundles are split here, with their timetags, so their messages can be applied together.
public enum OSCCodec {
    /// Why a packet could not be decoded.
    public struct DecodingError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    private static let bundleTag = Array("#bundle".utf8) + [0]
    /// Bundles nested deeper than this are rejected (a crafted packet cannot recurse forever).
    private static let maximumBundleDepth = 8

    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> OSCPacket {
        try decode(bytes[...], depth: 0)
    }

    private static func decode(_ bytes: ArraySlice<UInt8>, depth: Int) throws(DecodingError) -> OSCPacket {
        if bytes.starts(with: bundleTag) {
            // Why not liblo: liblo 0.31 has no bundle deserialiser (lo_server_dispatch_data hands
            // bundles to a server's handlers, and holds future timetags in its own queue).
            guard depth < maximumBundleDepth else { throw DecodingError(message: "bundles nested too deeply") }
            guard bytes.count >= 16 else { throw DecodingError(message: "truncated bundle header") }
            let timetag = bytes[bytes.startIndex + 8..<bytes.startIndex + 16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            var elements: [OSCPacket] = []
            var offset = bytes.startIndex + 16  // "#bundle\0" + 8-byte timetag
            while offset < bytes.endIndex {
                guard offset + 4 <= bytes.endIndex else { throw DecodingError(message: "truncated bundle element size") }
                let size = Int(UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
                    | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3]))
                offset += 4
                guard size > 0, size % 4 == 0, offset + size <= bytes.endIndex else {
                    throw DecodingError(message: "bad bundle element size \(size)")
                }
                elements.append(try decode(bytes[offset..<offset + size], depth: depth + 1))
                offset += size
            }
            return .bundle(OSCTimetag(rawValue: timetag), elements)
        }
        return .message(try decodeMessage(Array(bytes)))
    }

    private static func decodeMessage(_ bytes: [UInt8]) throws(DecodingError) -> OSCMessage {
        guard bytes.first == UInt8(ascii: "/") else { throw DecodingError(message: "not an OSC packet (no address)") }
        guard let end = bytes.firstIndex(of: 0) else { throw DecodingError(message: "unterminated OSC address") }
        let address = String(decoding: bytes[..<end], as: UTF8.self)
        var mutableBytes = bytes
        var result: Int32 = 0
        if let arguments = decodeWithLiblo(&mutableBytes, result: &result) { return OSCMessage(address, arguments) }
        // liblo refuses some well-formed messages (arrays, RGBA colours): those are retagged for
        // it, so `/ping` echoes a colour and every other address answers a type error naming it.
        if let arguments = OSCTypeTagScanner.arguments(of: bytes, addressEnd: end) {
            return OSCMessage(address, arguments)
        }
        throw DecodingError(message: "malformed OSC message for \(address) (liblo error \(result))")
    }

    /// The arguments liblo reads from the message in `bytes`; nil when it refuses it (its error
    /// code in `result`).
    static func decodeWithLiblo(_ bytes: inout [UInt8], result: inout Int32) -> [OSCArgument]? {
        let decoded = bytes.withUnsafeMutableBytes { raw in
            lo_message_deserialise(raw.baseAddress, raw.count, &result)
        }
        guard let message = decoded else { return nil }
        defer { lo_message_free(message) }
        return arguments(of: message)
    }

    static func decodeWithLiblo(_ bytes: inout [UInt8]) -> [OSCArgument]? {
        var result: Int32 = 0
        return decodeWithLiblo(&bytes, result: &result)
    }

    private static func arguments(of message: lo_message) -> [OSCArgument] {
        let count = Int(lo_message_get_argc(message))
        guard count > 0, let types = lo_message_get_types(message), let argv = lo_message_get_argv(message) else {
            return []
        }
        return (0..<count).map { index -> OSCArgument in
            let tag = UInt8(bitPattern: types[index])
            // T, F, N and I carry no data: liblo leaves their argv entry empty.
            switch tag {
            case UInt8(ascii: "T"): return .bool(true)
            case UInt8(ascii: "F"): return .bool(false)
            case UInt8(ascii: "N"): return .nil_
            case UInt8(ascii: "I"): return .impulse
            default: break
            }
            guard let argument = argv[index] else { return .unsupported(Character(UnicodeScalar(tag))) }
            switch tag {
            case UInt8(ascii: "i"): return .int32(argument.pointee.i)
            case UInt8(ascii: "h"): return .int64(argument.pointee.h)
            case UInt8(ascii: "f"): return .float(argument.pointee.f)
            case UInt8(ascii: "d"): return .double(argument.pointee.d)
            case UInt8(ascii: "s"):
                return .string(String(cString: UnsafeRawPointer(argument).assumingMemoryBound(to: CChar.self)))
            case UInt8(ascii: "S"):
                return .symbol(String(cString: UnsafeRawPointer(argument).assumingMemoryBound(to: CChar.self)))
            case UInt8(ascii: "b"):
                // liblo's argv entry is the blob as received, `lo_arg.blob`: its size (host order),
                // then the bytes (not a `lo_blob`, whose data is behind a pointer).
                let size = Int(argument.pointee.blob.size)
                let data = UnsafeRawPointer(argument) + MemoryLayout<Int32>.size
                return .blob(size > 0 ? Array(UnsafeRawBufferPointer(start: data, count: size)) : [])
            case UInt8(ascii: "t"):
                let time = argument.pointee.t
                return .timetag(UInt64(time.sec) << 32 | UInt64(time.frac))
            case UInt8(ascii: "c"): return .char(argument.pointee.c)
            case UInt8(ascii: "m"):
                let bytes = argument.pointee.m
                return .midi(port: bytes.0, status: bytes.1, data1: bytes.2, data2: bytes.3)
            default: return .unsupported(Character(UnicodeScalar(tag)))
            }
        }
    }

    /// The wire form of `message`. `unsupported` arguments are left out (nothing SoundFit sends
    /// has one; `/ping` refuses to echo them).
    public static func encode(_ message: OSCMessage) -> [UInt8] {
        guard let lo = lo_message_new() else { return [] }
        defer { lo_message_free(lo) }
        // What liblo cannot write goes out as the int32 with the same four bytes, and its type
        // tag is changed afterwards: an RGBA colour, an empty blob (on the wire its size word, 0).
        // Why not liblo: it has no `r`, and lo_blob_new refuses 0 bytes.
        var retagged: [(index: Int, tag: Character)] = []
        var tagCount = 0
        for argument in message.arguments {
            switch argument {
            case .int32(let v): lo_message_add_int32(lo, v)
            case .int64(let v): lo_message_add_int64(lo, v)
            case .float(let v): lo_message_add_float(lo, v)
            case .double(let v): lo_message_add_double(lo, v)
            case .string(let v): lo_message_add_string(lo, v)
            case .symbol(let v): lo_message_add_symbol(lo, v)
            case .bool(let v): if v { lo_message_add_true(lo) } else { lo_message_add_false(lo) }
            case .nil_: lo_message_add_nil(lo)
            case .impulse: lo_message_add_infinitum(lo)
            case .blob(let bytes) where bytes.isEmpty:
                retagged.append((tagCount, "b"))
                lo_message_add_int32(lo, 0)
            case .blob(let bytes):
                let blob = bytes.withUnsafeBytes { lo_blob_new(Int32(bytes.count), $0.baseAddress) }
                lo_message_add_blob(lo, blob)
                lo_blob_free(blob)
            case .timetag(let v): lo_message_add_timetag(lo, lo_timetag(sec: UInt32(v >> 32), frac: UInt32(truncatingIfNeeded: v)))
            case .char(let v): lo_message_add_char(lo, CChar(bitPattern: v))
            case .midi(let port, let status, let data1, let data2):
                var bytes = [port, status, data1, data2]
                lo_message_add_midi(lo, &bytes)
            case .rgba(let red, let green, let blue, let alpha):
                retagged.append((tagCount, "r"))
                lo_message_add_int32(lo, Int32(bitPattern: UInt32(red) << 24 | UInt32(green) << 16 | UInt32(blue) << 8 | UInt32(alpha)))
            case .unsupported: continue
            }
            tagCount += 1
        }
        var size = 0
        guard let raw = lo_message_serialise(lo, message.address, nil, &size) else { return [] }
        defer { free(raw) }
        var bytes = Array(UnsafeRawBufferPointer(start: raw, count: size))
        // The type tags follow the NUL-padded address: ",", then one tag per argument.
        let comma = (message.address.utf8.count + 4) & ~3
        for (index, tag) in retagged { bytes[comma + 1 + index] = tag.asciiValue! }
        return bytes
    }
}
