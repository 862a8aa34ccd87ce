import Foundation
import Testing

/// One recording of the timed recorder: the samples and, per cycle, its JACK frame time.
struct TimedRecording {
    var channels: [[Float]]
    /// JACK frame time of each recorded cycle, and the capture index of its first frame.
    var cycleFrames: [UInt32]
    var cycleStarts: [Int]
    var period: Int
    /// Xruns the server reported while recording.
    var xruns: Int

    /// True when every cycle follows the previous one by exactly one period (no skipped cycle),
    /// so capture index and JACK frame time map one to one.
    var isContiguous: Bool {
        guard cycleFrames.count >= 2 else { return true }
        for index in 1..<cycleFrames.count where
            cycleFrames[index] &- cycleFrames[index - 1] != UInt32(cycleStarts[index] - cycleStarts[index - 1]) {
            return false
        }
        return true
    }

    /// The JACK frame time at which capture index `sample` was rendered.
    func frameTime(ofSample sample: Int) -> UInt32 {
        var cycle = 0
        while cycle + 1 < cycleStarts.count && cycleStarts[cycle + 1] <= sample { cycle += 1 }
        return cycleFrames[cycle] &+ UInt32(sample - cycleStarts[cycle])
    }
}

/// Two test clients, `sfplay` (player, outputs `out_i`) and `sfrec` (recorder, inputs `in_i`),
/// patched `sfplay → target → sfrec`. Unlike one client with both roles (a feedback loop JACK
/// must break with a one-period delay somewhere), this graph has no loop: JACK runs player,
/// target and recorder in that order within every cycle, so the frame time of a recorded cycle
/// is the frame time of the cycle in which the target produced it.
final class TimedAudioClients: @unchecked Sendable {
    let player: TestJackClient
    let recorder: TestJackClient
    var channelCount: Int { recorder.channelCount }
    var period: Int { recorder.period }

    init(server: String, channels: Int, playCapacity: Int = 48000, recordCapacity: Int = 96000) throws {
        player = try TestJackClient(server: server, name: "sfplay", channels: channels, roles: .player,
                                    playCapacity: playCapacity)
        recorder = try TestJackClient(server: server, name: "sfrec", channels: channels, roles: .recorder,
                                      recordCapacity: recordCapacity)
    }

    /// Deactivates and closes both clients. Idempotent.
    func close() {
        player.close()
        recorder.close()
    }

    /// `sfplay:out_i → <target>:input_i` and `<target>:output_i → sfrec:in_i`.
    func connect(through target: String) throws {
        for channel in 1...channelCount {
            try player.connect("\(player.name):out_\(channel)", "\(target):input_\(channel)")
            try player.connect("\(target):output_\(channel)", "\(recorder.name):in_\(channel)")
        }
    }

    /// The current JACK frame time (an estimate of the frame being played now).
    var frameTime: UInt32 { recorder.frameTime }

    /// JACK's clock now, microseconds.
    var jackTime: UInt64 { recorder.jackTime }

    /// The JACK frame time at JACK time `microseconds`.
    func frameTime(atJackTime microseconds: UInt64) -> UInt32 { recorder.frameTime(atJackTime: microseconds) }

    /// How many cycles the current recording has taken so far. The recorder runs after the
    /// target in every cycle, so each of them was already rendered when this is read: a change
    /// requested afterwards can only land in a later cycle (a bound that needs no clock).
    var cyclesRecorded: Int { recorder.cyclesRecorded }

    /// Xruns the server reported since the clients opened.
    var xruns: Int { recorder.xruns }

    /// Waits until the player has run the cycles of `seconds` of audio (whole periods, at least
    /// one): a span of audio time counted on JACK's cycles, the event a stalled server does not
    /// fake (a wall-clock sleep would count time no cycle ran in).
    func waitForAudio(seconds: Double) throws { try player.waitForAudio(seconds: seconds) }

    /// Loops `signal` on every output (replacing what played before).
    func play(_ signal: [Float]) throws { try player.startPlaying([signal]) }

    /// Starts recording `frames` frames per channel from the next cycle on; returns at once.
    func startRecording(frames: Int) throws { try recorder.startRecording(frames: frames) }

    /// Waits until the recording started by `startRecording` is complete and returns it.
    func finishRecording() throws -> TimedRecording { try recorder.finishRecording() }
}

/// Signed distance `a − b` between two JACK frame times (wrapping 32-bit counters).
func frameDistance(_ a: UInt32, _ b: UInt32) -> Int {
    Int(Int32(bitPattern: a &- b))
}

extension TimedAudioClients {
    /// Records one `/output/gain` change until a recording has no skipped cycle and no xrun, at
    /// most `attempts` times: `attempt` (given its number) makes the change and returns what it
    /// recorded, with whatever else it measured. Between attempts the gain goes back to
    /// `current` (through `osc`), so the next attempt changes it again. Eight attempts: on a
    /// machine loaded by other runs, four glitched in a row once. Nil, with an issue
    /// recorded, when no attempt was glitch-free.
    func glitchFreeRecording<Measured>(restoringGain current: Float, through osc: OSCTestClient, attempts: Int = 8,
                                       _ attempt: (Int) throws -> (TimedRecording, Measured)) throws -> (TimedRecording, Measured)? {
        for number in 1...attempts {
            let (recording, measured) = try attempt(number)
            if recording.isContiguous && recording.xruns == 0 { return (recording, measured) }
            print("note: recording with a skipped cycle or xrun (attempt \(number)); recording again")
            guard number < attempts else { break }
            expectApplied(try osc.set("/output/gain", .float(current)), "/output/gain", .float(current), changed: false)
            try waitForAudio(seconds: 0.05)  // past the 20 ms ramp
        }
        Issue.record("no glitch-free recording in \(attempts) attempts")
        return nil
    }
}
