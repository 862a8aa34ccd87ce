import OSCCore
import SoundFitModel

/// `/ping`, `/sync`, `/list`, `/status`.
extension OSCCommandTable {
    static let discovery = [ping, sync, list, status]

    static let ping = OSCCommand(
        OSCCommandDescription(
            "/ping", section: .discovery,
            summary: "Liveness check. Every argument is echoed back byte for byte, of every OSC 1.0 and 1.1 type.",
            arguments: [
                Arg("i|h|f|d|s|S|b|t|c|m|r|T|F|N|I", "argument", "any value of any type but an array, echoed",
                    optional: true, repeats: true),
            ],
            reply: "`/pong` with the request's arguments, same types and values.",
            errors: ["an array argument (`[`…`]`): SoundFit does not carry arrays, so it cannot echo them"],
            examples: ["oscsend localhost 7700 /ping", "oscsend localhost 7700 /ping ihcm 1 2 x 90403c7f"]),
        requests: [OSCMessageForm("/ping", .any)],
        replies: [OSCMessageForm("/pong", .any)],
        prepare: { request in
            guard !request.arguments.contains(where: { if case .unsupported = $0 { true } else { false } }) else {
                return .reject("/ping cannot echo arrays ([…]); every other argument type is echoed")
            }
            return .perform { request.reply(OSCMessage("/pong", request.arguments)) }
        })

    static let sync = OSCCommand(
        OSCCommandDescription(
            "/sync", section: .discovery,
            summary: "Waits for this client's earlier requests, as scsynth's `/sync`: answered once every request "
                + "it sent before (from the same address and port, or over the same connection) has ended — "
                + "each set's terminal `/state` (applied, failed or superseded; a bundle timetagged ahead ends "
                + "when it applies) and each command's answer were sent before `/synced`, and so were the "
                + "value feedback, terminal `/state` reports, `/invalidated` notifications and hearing-test reports "
                + "they caused to every subscriber. Replies to one client keep their order, so a script sends its "
                + "changes, then `/sync`, and reads up to `/synced` instead of waiting a fixed time; a subscriber "
                + "holds everything those requests caused once the requester read `/synced`.",
            arguments: [Arg("i", "id", "any number; echoed, so several `/sync`s can be told apart")],
            reply: "`/synced ,i id`.",
            errors: ["no argument, more than one, or one that is not an int32",
                     "more than \(PendingRequests.maximumWaitingSyncs) `/sync`s of this client still waiting"],
            examples: ["oscsend localhost 7700 /sync i 1"]),
        requests: [OSCMessageForm("/sync", .exactly([.int]))],
        replies: [OSCMessageForm("/synced", .any)],
        prepare: { request in
            guard request.arguments.count == 1, case .int32(let id) = request.arguments[0] else {
                return .reject("/sync takes one int, an id that /synced echoes; got ,\(request.message.typeTags)")
            }
            return .perform {
                let waits = request.surface.pending.sync(request.sender) {
                    request.surface.feedback.afterFlush { request.reply(OSCMessage("/synced", [.int32(id)])) }
                }
                if !waits {
                    request.reject("\(PendingRequests.maximumWaitingSyncs) /sync requests of this client are still waiting; wait for /synced")
                }
            }
        })

    static let list = OSCCommand(
        OSCCommandDescription(
            "/list", section: .discovery,
            summary: "Describes every parameter: type, access, range, default and unit. With an address pattern, "
                + "only the parameters it matches, or whose container it matches (`/filter` and `/filter/*` both "
                + "list the filter's parameters).",
            arguments: [Arg("s", "pattern", "an OSC address pattern or address (see Address patterns).", optional: true)],
            reply: "One `/list/param ,s address ,s type ,s access <min> <max> <default> ,s unit` per parameter "
                + "(for strings a single `,s choices`, space-separated, instead of min and max), "
                + "then `/list/end ,i count`.",
            errors: ["more than one argument, or one that is not a string",
                     "a malformed pattern, or one that matches no parameter"],
            examples: ["oscsend localhost 7700 /list", "oscsend localhost 7700 /list s /filter",
                       "oscsend localhost 7700 /list s '/*/enabled'"]),
        requests: [.bare("/list"), OSCMessageForm("/list", .exactly([.string()]))],
        replies: [OSCMessageForm("/list/param", .any), OSCMessageForm("/list/end", .any)],
        prepare: { request in
            if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
            let descriptors: [ParameterDescriptor]
            switch request.arguments.count {
            case 0:
                descriptors = ParameterModel.all
            case 1:
                guard case .string(let text) = request.arguments[0] else {
                    return .reject("/list takes one optional string, an address pattern; got ,\(request.message.typeTags)")
                }
                do throws(OSCAddressPattern.Problem) {
                    let pattern = try OSCAddressPattern(text)
                    var matching: [ParameterDescriptor] = []
                    for descriptor in ParameterModel.all
                    where try pattern.matchesAddressOrContainer(of: descriptor.address) {
                        matching.append(descriptor)
                    }
                    descriptors = matching
                } catch {
                    return .reject(error.description)
                }
                guard !descriptors.isEmpty else { return .reject("no parameter matches \(text)") }
            default:
                return .reject("/list takes one optional string, an address pattern; got \(request.arguments.count) arguments")
            }
            return .perform {
                for descriptor in descriptors {
                    request.reply(OSCMessage("/list/param", listArguments(descriptor)))
                }
                request.reply(OSCMessage("/list/end", [.int32(Int32(descriptors.count))]))
            }
        })

    /// `/list/param ,s address ,s type ,s access ,<min> ,<max> | ,s choices… ,<default> ,s unit`.
    static func listArguments(_ descriptor: ParameterDescriptor) -> [OSCArgument] {
        var arguments: [OSCArgument] = [.string(descriptor.address), .string(descriptor.kind.typeName),
                                        .string(descriptor.access.rawValue)]
        switch descriptor.kind {
        case .bool: arguments += [.int32(0), .int32(1)]
        case .float(let range): arguments += [.float(range.lowerBound), .float(range.upperBound)]
        case .int(let range): arguments += [.int32(Int32(range.lowerBound)), .int32(Int32(range.upperBound))]
        case .choice(let names): arguments.append(.string(names.joined(separator: " ")))
        }
        arguments.append(descriptor.defaultValue.oscArgument)
        arguments.append(.string(descriptor.unit))
        return arguments
    }

    static let status = OSCCommand(
        OSCCommandDescription(
            "/status", section: .discovery,
            summary: "Engine and connection status.",
            reply: "`/status` followed by key/value pairs (`,s key <value>` each): connected, server, client, "
                + "sample_rate, buffer_size, xruns, reconnections (how often SoundFit connected again after its "
                + "server went away; the JACK fields are one snapshot, so `connected 1` after a restart comes "
                + "with the reconnection counted), port_connections (the connections of SoundFit's ports it "
                + "noted from JACK, which it restores after a server restart), freewheeling (1 while the JACK server freewheels; xruns and "
                + "callback timings then stay as they were), freewheel_cycles, callback_load, callback timing "
                + "percentiles (how long the process callback took, monotonic clock), "
                + "osc_udp, osc_tcp (`tcp://host:port` or `off`), osc_tcp_connections, http (`http://host:port` or `off`), "
                + "http_connections, persisted (with a state directory: 1 while every applied change is "
                + "persisted, 0 while the state cannot be written — full disk, read-only, I/O error; it goes "
                + "back to 1 by itself once a write succeeds), session (`active` or `inactive`; it follows the "
                + "connection: after a reconnection it reads `active` once the session has started again), "
                + "cycles, max_output_spl, output_ceiling_spl (the ceiling fixed at start), output_limit_dbfs (the "
                + "output's limit in force, dB relative to full scale), output_limit_left_dbfs, output_limit_right_dbfs, "
                + "derived_max_output_left_spl, derived_max_output_right_spl (per ear), output_limit_db, version, "
                + "applied_share_db, gain_capped_bands, …",
            examples: ["oscsend localhost 7700 /status"]),
        requests: [.bare("/status")],
        replies: [OSCMessageForm("/status", .atLeast(1))],
        prepare: { request in
            if let refusal = refusalOfLargeAnswer(to: request) { return refusal }
            return .perform { request.reply(request.surface.statusMessage()) }
        })
}
