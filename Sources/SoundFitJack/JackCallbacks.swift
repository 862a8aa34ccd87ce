import CJack
import CRealtimeSupport
import Dispatch
import Logging
import Synchronization

// Every C callback JACK calls lives here, as a plain nonisolated function: a closure written in
// main-actor code would carry an executor check that kills the process when JACK calls it from
// its own thread. `arg` is always an unretained
// `JackClientConnection`, alive until after `jack_client_close`.

/// The process callback. Real-time thread: no allocation, locks, logging or Swift concurrency.
/// `_withUnsafeGuaranteedRef` borrows the connection without retain/release.
/// The callback's duration for `/status` is read on `CLOCK_MONOTONIC`, which the vDSO answers
/// in user space (~0.1 µs a read on the 2-core build VM); the thread CPU clock it replaced is a
/// real system call (`task_sched_runtime`, ~2.8 µs a read there), and two of them a cycle were
/// the largest fixed cost of a cycle (BENCHMARKS.md).
func soundfitProcessCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    soundfit_realtime_section_enter()
    let start = soundfit_monotonic_time_ns()
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef { connection in
        let rate = Double(connection.serverSampleRate.load(ordering: .relaxed))
        let freewheeling = connection.freewheeling.load(ordering: .relaxed)
        let midiSourceConnected = connection.midiSourceConnected.load(ordering: .relaxed)
        _ = connection.processState.pointee.process(client: connection.client, frames: frames, serverSampleRate: rate,
                                                    freewheeling: freewheeling, midiSourceConnected: midiSourceConnected)
        // A freewheeling cycle has no deadline: its time says nothing about real-time load.
        if freewheeling {
            connection.freewheelCycles.add(1, ordering: .relaxed)
        } else {
            connection.timings.record(nanoseconds: soundfit_monotonic_time_ns() &- start)
        }
    }
    soundfit_realtime_section_leave()
    return 0
}

/// JACK's real-time thread starts: flush denormals to zero on it, and name it `soundfit-audio`
/// (it would otherwise inherit the name of the Swift concurrency thread that opened the client).
func soundfitThreadInitCallback(_ arg: UnsafeMutableRawPointer?) {
    soundfit_enable_flush_denormals()
    soundfit_name_current_thread("soundfit-audio")
}

/// Notification thread.
func soundfitSampleRateCallback(_ rate: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.serverSampleRate.store(UInt32(rate), ordering: .relaxed)
    }
    return 0
}

/// Notification thread (the renderer chunks any block size, so nothing to reallocate).
func soundfitBufferSizeCallback(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.serverBufferSize.store(UInt32(frames), ordering: .relaxed)
    }
    return 0
}

/// Notification thread. While freewheeling there is no deadline to miss: what JACK reports
/// then (also around entering and leaving freewheel mode) is not an xrun of the audio path.
func soundfitXrunCallback(_ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        guard !$0.freewheeling.load(ordering: .relaxed) else { return }
        $0.xruns.add(1, ordering: .relaxed)
    }
    return 0
}

/// The server enters (`starting` non-zero) or leaves freewheel mode. JACK calls it before the
/// first freewheeling cycle and after the last (JACK 2: from its notification thread, never
/// inside a process cycle); it flags the mode (the process callback reads it) and wakes the
/// host's supervisor, which reports it.
func soundfitFreewheelCallback(_ starting: Int32, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.freewheeling.store(starting != 0, ordering: .relaxed)
        $0.stateChanged?.signal()
    }
}

/// The server went away (or kicked us out). Called on a JACK thread (outside any process
/// cycle: there is no server to run one); flags it and wakes the host's supervisor, which
/// closes the client and reconnects.
func soundfitShutdownCallback(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.serverWentAway.store(true, ordering: .releasing)
        $0.stateChanged?.signal()
    }
}

/// PipeWire 0.3's shutdown notice (it never calls the info variant). Same thread rules.
func soundfitPlainShutdownCallback(_ arg: UnsafeMutableRawPointer?) {
    soundfitShutdownCallback(jack_status_t(rawValue: 0), nil, arg)
}

/// A port was registered or unregistered. Notification thread: the connection notes which of
/// our connections wait for a port that went away and wakes the supervisor to restore them.
func soundfitPortRegistrationCallback(_ port: jack_port_id_t, _ register: Int32, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.portRegistrationChanged(port, registered: register != 0)
    }
}

/// Two ports were connected or disconnected. Notification thread: the connection records it
/// when one of the ports is ours, so connections survive a server that dies right after.
func soundfitPortConnectCallback(_ a: jack_port_id_t, _ b: jack_port_id_t, _ connect: Int32, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef {
        $0.portConnectionChanged(a, b, connected: connect != 0)
    }
}

/// SoundFit adds no latency of its own: each output port reports its input's capture latency,
/// each input port its output's playback latency. Notification thread.
func soundfitLatencyCallback(_ mode: jack_latency_callback_mode_t, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    Unmanaged<JackClientConnection>.fromOpaque(arg)._withUnsafeGuaranteedRef { connection in
        let state = connection.processState
        for channel in 0..<state.pointee.channelCount {
            var range = jack_latency_range_t(min: 0, max: 0)
            if mode == JackCaptureLatency {
                jack_port_get_latency_range(state.pointee.inputPorts[channel], mode, &range)
                jack_port_set_latency_range(state.pointee.outputPorts[channel], mode, &range)
            } else {
                jack_port_get_latency_range(state.pointee.outputPorts[channel], mode, &range)
                jack_port_set_latency_range(state.pointee.inputPorts[channel], mode, &range)
            }
        }
    }
}

/// libjack's own error and info lines ("Cannot connect to server socket…") repeat on every
/// connection attempt; they go to the debug log, and SoundFit says what happened in its own words.
func soundfitJackMessageCallback(_ message: UnsafePointer<CChar>?) {
    guard let message else { return }
    jackLibraryLogger.debug("libjack: \(String(cString: message))")
}

let jackLibraryLogger = Logger(label: "soundfit.libjack")
