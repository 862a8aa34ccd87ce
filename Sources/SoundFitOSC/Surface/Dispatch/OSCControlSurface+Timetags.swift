import OSCCore
import SoundFitModel

/// When a routed packet takes effect: a bundle's timetag, mapped from NTP (wall clock) onto the
/// engine clock, checked against the scheduling horizon and the schedule's room. Runs after
/// routing (validation) and before anything is performed, on the receive thread.
enum PacketTiming: Equatable {
    /// At once: a message, a bundle timetagged "immediately" (1), or a moment already past.
    case now
    /// At this moment on the engine clock.
    case at(EngineTime)
    /// Not at all: answered with `/error ,s address ,s reason`, nothing performed.
    case refused(address: String, reason: String)
}

extension OSCControlSurface {
    /// The farthest ahead a bundle may be timetagged, in seconds: farther is refused. Bounds how
    /// long a scheduled change holds one of the engine's `ScheduledChanges.capacity` places.
    static let schedulingHorizonSeconds = 10.0

    /// When `packet` (routed to `routes`) takes effect. A bundle timed for later may only set
    /// parameters that can be scheduled (the kernels: filter, ring modulator, output gain); a
    /// command, a query or a session parameter in it refuses the whole bundle, as do a
    /// timetag beyond the horizon, nested timetags that differ from the outermost one, and a
    /// full schedule. Rejected elements and replies in the bundle are left to the routes.
    func timing(of packet: OSCPacket, routes: [RoutedMessage]) -> PacketTiming {
        if let problem = packet.nestedTimetagProblem { return .refused(address: "", reason: problem) }
        let (wallClockNow, engineNow) = (OSCTimetag.wallClockNow, EngineTime.now)
        guard let ahead = packet.timetag.secondsAhead(ofWallClock: wallClockNow), ahead > 0,
              let moment = packet.timetag.engineTime(wallClockNow: wallClockNow, engineNow: engineNow) else {
            return .now  // immediately, or already past: at once, as OSC 1.0 says for late bundles
        }
        guard ahead <= Self.schedulingHorizonSeconds else {
            return .refused(address: "", reason: """
                bundle timetagged \(Self.seconds(ahead)) s ahead: beyond the \(Self.seconds(Self.schedulingHorizonSeconds)) s \
                scheduling horizon, nothing applied
                """)
        }
        for (index, routed) in routes.enumerated() {
            let what: String
            switch routed {
            case .reply, .rejected: continue
            case .set(let set) where parameters.isSchedulable(set): continue
            case .sets(let sets) where sets.allSatisfy(parameters.isSchedulable): continue
            case .set(let set): what = "\(set.address) is a session parameter, which takes effect at once only"
            case .sets(let sets):
                let session = sets.first { !parameters.isSchedulable($0) }?.address ?? ""
                what = "the pattern selects \(session), a session parameter, which takes effect at once only"
            case .command: what = "\(packet.messages[index].address) is a command"
            case .query, .queries: what = "\(packet.messages[index].address) without a value is a query"
            }
            let address = packet.messages[index].address
            return .refused(address: address, reason: """
                element \(index + 1) of a bundle timed \(Self.seconds(ahead)) s ahead: only kernel parameters \
                (/filter/*, /ringmod/*, /output/gain) can be scheduled, and \(what); nothing applied
                """)
        }
        guard parameters.canSchedule else {
            return .refused(address: "", reason: """
                \(parameters.scheduleCapacity) bundles are already scheduled: the schedule is full, nothing applied
                """)
        }
        return .at(moment)
    }

    private static func seconds(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
