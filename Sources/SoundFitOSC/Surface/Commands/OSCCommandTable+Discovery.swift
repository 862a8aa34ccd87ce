import SoundFitModel

/// `/ping`, `/list`, `/status`.
extension OSCCommandTable {
    static let discovery = [ping, list, status]

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
        handle: { request in
            guard !request.arguments.contains(where: { if case .unsupported = $0 { true } else { false } }) else {
                request.reject("/ping cannot echo arrays ([…]); every other argument type is echoed")
                return
            }
            request.reply(OSCMessage("/pong", request.arguments))
        })

    static let list = OSCCommand(
        OSCCommandDescription(
            "/list", section: .discovery,
            summary: "Describes every parameter: type, access, range, default and unit.",
            reply: "One `/list/param ,s address ,s type ,s access <min> <max> <default> ,s unit` per parameter "
                + "(for strings a single `,s choices`, space-separated, instead of min and max), "
                + "then `/list/end ,i count`.",
            errors: ["any argument (it takes none)"],
            examples: ["oscsend localhost 7700 /list"]),
        requests: [.bare("/list")],
        replies: [OSCMessageForm("/list/param", .any), OSCMessageForm("/list/end", .any)],
        handle: { request in
            guard request.arguments.isEmpty else {
                request.reject("/list takes no arguments")
                return
            }
            let descriptors = request.surface.runtime.descriptors
            for descriptor in descriptors {
                request.reply(OSCMessage("/list/param", listArguments(descriptor)))
            }
            request.reply(OSCMessage("/list/end", [.int32(Int32(descriptors.count))]))
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
                + "sample_rate, buffer_size, xruns, callback_load, callback timing percentiles, "
                + "osc_udp, osc_tcp (`tcp://host:port` or `off`), osc_tcp_connections, session, "
                + "cycles, version, …",
            examples: ["oscsend localhost 7700 /status"]),
        requests: [.bare("/status")],
        replies: [OSCMessageForm("/status", .atLeast(1))],
        handle: { request in request.reply(request.surface.statusMessage()) })
}
