/// A minimal PNG encoder for `soundfit verify --plot`: 8-bit RGB, filter 0 on every row, the
/// zlib stream made of stored (uncompressed) deflate blocks (RFC 1950/1951), chunks with their
/// CRC-32 (PNG specification, ISO/IEC 15948 §5.3). No dependency; the files are larger than a
/// compressing encoder's (about 3 bytes per pixel), which is fine for a plot. Any thread.
struct PNGEncoder {
    /// A `width`×`height` image's PNG bytes from `rgb` (3 bytes per pixel, rows top to bottom).
    static func encode(width: Int, height: Int, rgb: [UInt8]) -> [UInt8] {
        precondition(width > 0 && height > 0 && rgb.count == width * height * 3)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for row in 0..<height {
            raw.append(0)   // filter type 0: none
            raw += rgb[(row * width * 3)..<((row + 1) * width * 3)]
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]   // bit depth 8, colour type 2 (RGB), deflate, filter 0, no interlace
        png += chunk("IHDR", header)
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    /// A zlib stream of stored deflate blocks (at most 65535 bytes each) and its Adler-32.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]   // deflate, 32 K window; 0x7801 is a multiple of 31
        var offset = 0
        repeat {
            let length = min(65535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            out.append(final)   // BFINAL, BTYPE 00 (stored)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<(offset + length)]
            offset += length
        } while offset < data.count
        return out + bigEndian(adler32(data))
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    /// CRC-32 (polynomial 0xEDB88320, reflected), as PNG's chunks carry it.
    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// An RGB canvas to draw a plot on: pixels, lines, rectangles and text in a 3×5 pixel font
/// (digits, a few capitals and signs), scaled. Any thread.
struct Canvas {
    typealias Colour = (UInt8, UInt8, UInt8)
    let width: Int, height: Int
    private(set) var rgb: [UInt8]

    init(width: Int, height: Int, background: Colour = (255, 255, 255)) {
        self.width = width
        self.height = height
        rgb = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) { rgb[3 * i] = background.0; rgb[3 * i + 1] = background.1; rgb[3 * i + 2] = background.2 }
    }

    mutating func set(_ x: Int, _ y: Int, _ colour: Colour) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let i = 3 * (y * width + x)
        rgb[i] = colour.0; rgb[i + 1] = colour.1; rgb[i + 2] = colour.2
    }

    mutating func fill(x: Int, y: Int, width w: Int, height h: Int, _ colour: Colour) {
        for yy in y..<(y + h) { for xx in x..<(x + w) { set(xx, yy, colour) } }
    }

    /// A line `thickness` pixels wide (squares stamped along it); `dash` > 0 draws dashes of that length.
    mutating func line(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, _ colour: Colour,
                       thickness: Int = 1, dash: Int = 0) {
        guard x0.isFinite, y0.isFinite, x1.isFinite, y1.isFinite else { return }
        let steps = max(1, Int(max(abs(x1 - x0), abs(y1 - y0)).rounded(.up)))
        let half = thickness / 2
        for step in 0...steps {
            if dash > 0, (step / dash) % 2 == 1 { continue }
            let t = Double(step) / Double(steps)
            let x = Int((x0 + t * (x1 - x0)).rounded()), y = Int((y0 + t * (y1 - y0)).rounded())
            for dy in -half..<(thickness - half) { for dx in -half..<(thickness - half) { set(x + dx, y + dy, colour) } }
        }
    }

    /// `text` with its top left at (x, y), each font pixel `scale`×`scale`; characters the font
    /// lacks are left blank.
    mutating func text(_ text: String, x: Int, y: Int, scale: Int = 2, _ colour: Colour = (0, 0, 0)) {
        var cursor = x
        for character in text.uppercased() {
            if let rows = Self.font[character] {
                for (row, bits) in rows.enumerated() {
                    for (column, bit) in bits.enumerated() where bit == "#" {
                        fill(x: cursor + column * scale, y: y + row * scale, width: scale, height: scale, colour)
                    }
                }
            }
            cursor += 4 * scale
        }
    }

    /// The width in pixels of `text` at `scale`.
    static func textWidth(_ text: String, scale: Int = 2) -> Int { text.count * 4 * scale - scale }

    static let font: [Character: [String]] = [
        "0": ["###", "#.#", "#.#", "#.#", "###"], "1": [".#.", "##.", ".#.", ".#.", "###"],
        "2": ["###", "..#", "###", "#..", "###"], "3": ["###", "..#", ".##", "..#", "###"],
        "4": ["#.#", "#.#", "###", "..#", "..#"], "5": ["###", "#..", "###", "..#", "###"],
        "6": ["###", "#..", "###", "#.#", "###"], "7": ["###", "..#", ".#.", ".#.", ".#."],
        "8": ["###", "#.#", "###", "#.#", "###"], "9": ["###", "#.#", "###", "..#", "###"],
        "-": ["...", "...", "###", "...", "..."], ".": ["...", "...", "...", "...", ".#."],
        "+": ["...", ".#.", "###", ".#.", "..."], "/": ["..#", "..#", ".#.", "#..", "#.."],
        ":": ["...", ".#.", "...", ".#.", "..."], "(": [".#.", "#..", "#..", "#..", ".#."],
        ")": [".#.", "..#", "..#", "..#", ".#."], " ": ["...", "...", "...", "...", "..."],
        "A": [".#.", "#.#", "###", "#.#", "#.#"], "B": ["##.", "#.#", "##.", "#.#", "##."],
        "C": [".##", "#..", "#..", "#..", ".##"], "D": ["##.", "#.#", "#.#", "#.#", "##."],
        "E": ["###", "#..", "##.", "#..", "###"], "F": ["###", "#..", "##.", "#..", "#.."],
        "G": [".##", "#..", "#.#", "#.#", ".##"], "H": ["#.#", "#.#", "###", "#.#", "#.#"],
        "I": ["###", ".#.", ".#.", ".#.", "###"], "K": ["#.#", "#.#", "##.", "#.#", "#.#"],
        "L": ["#..", "#..", "#..", "#..", "###"], "M": ["#.#", "###", "###", "#.#", "#.#"],
        "N": ["##.", "#.#", "#.#", "#.#", "#.#"], "O": [".#.", "#.#", "#.#", "#.#", ".#."],
        "P": ["##.", "#.#", "##.", "#..", "#.."], "R": ["##.", "#.#", "##.", "#.#", "#.#"],
        "S": [".##", "#..", ".#.", "..#", "##."], "T": ["###", ".#.", ".#.", ".#.", ".#."],
        "U": ["#.#", "#.#", "#.#", "#.#", "###"], "V": ["#.#", "#.#", "#.#", "#.#", ".#."],
        "W": ["#.#", "#.#", "###", "###", "#.#"], "Z": ["###", "..#", ".#.", "#..", "###"],
        "Y": ["#.#", "#.#", ".#.", ".#.", ".#."], "Q": [".#.", "#.#", "#.#", "##.", ".##"],
        "X": ["#.#", "#.#", ".#.", "#.#", "#.#"], "J": ["..#", "..#", "..#", "#.#", ".#."],
    ]
}
