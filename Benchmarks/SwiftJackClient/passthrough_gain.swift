// The floor client (Benchmarks/CJackClient/passthrough_gain.c) in Swift: two inputs, two
// outputs, each output its input times 0.5, with the callback reaching its ports through a class
// instance the way SoundFit's does. Built with `swiftc -O` by Benchmarks/scripts/jackbench.py
// (`swift_client`), to tell what Swift itself adds to a JACK cycle from what SoundFit's callback
// does (docs/benchmarks/2026-11-30-cycle-place.md).
import CJackFloor
import Glibc

final class Ports {
    var inputs: [OpaquePointer] = []
    var outputs: [OpaquePointer] = []
}

/// The audio thread: no allocation, no lock.
let process: @convention(c) (jack_nframes_t, UnsafeMutableRawPointer?) -> Int32 = { frames, context in
    guard let context else { return 0 }
    Unmanaged<Ports>.fromOpaque(context)._withUnsafeGuaranteedRef { ports in
        for channel in 0..<2 {
            let input = jack_port_get_buffer(ports.inputs[channel], frames)!.assumingMemoryBound(to: Float.self)
            let output = jack_port_get_buffer(ports.outputs[channel], frames)!.assumingMemoryBound(to: Float.self)
            for frame in 0..<Int(frames) { output[frame] = 0.5 * input[frame] }
        }
    }
    return 0
}

let name = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "swift_passthrough_gain"
guard let client = floor_client_open(name) else {
    fputs("cannot connect to JACK\n", stderr)
    exit(1)
}
let ports = Ports()
for channel in 1...2 {
    ports.inputs.append(jack_port_register(client, "in_\(channel)", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0))
    ports.outputs.append(jack_port_register(client, "out_\(channel)", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0))
}
jack_set_process_callback(client, process, Unmanaged.passUnretained(ports).toOpaque())
guard jack_activate(client) == 0 else { exit(1) }
signal(SIGTERM) { _ in exit(0) }
while true { pause() }
