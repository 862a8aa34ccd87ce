import Foundation

/// Which libjack this process loaded: jackd2's, or PipeWire's (`pw-jack` puts
/// `/usr/${LIB}/pipewire-0.3/jack` first in `LD_LIBRARY_PATH`). With PipeWire's, a private
/// jackd is of no use: the client library only talks to PipeWire.
enum JackLibrary {
    /// The mapped `libjack.so` file, e.g.
    /// `/usr/lib/x86_64-linux-gnu/pipewire-0.3/jack/libjack.so.0.365.0` (from /proc/self/maps);
    /// nil when none is found.
    static var path: String? {
        // Read to the end: /proc files report a size of 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps"),
              let data = try? handle.readToEnd() else { return nil }
        try? handle.close()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let start = line.firstIndex(of: "/") else { continue }
            let file = line[start...]
            if file.split(separator: "/").last?.hasPrefix("libjack.so") == true { return String(file) }
        }
        return nil
    }

    /// True when the loaded libjack is PipeWire's.
    static var isPipeWire: Bool { path?.contains("pipewire") ?? false }
}
