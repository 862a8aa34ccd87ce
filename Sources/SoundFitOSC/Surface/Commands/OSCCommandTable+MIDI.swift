import OSCCore
import SoundFitModel
import SoundFitRuntime

/// `/midi/map`, `/midi/unmap`, `/midi/list`, `/midi/learn`, `/midi/learn/cancel`: MIDI control
/// changes bound to parameters (kept in the state), and learning them from the next control
/// change. Without MIDI control (an embedding that attached none) they answer `/error`.
extension OSCCommandTable {
    static let midi = [midiMap, midiUnmap, midiList, midiLearn, midiLearnCancel]

    /// `/midi/mapped ,s address ,i channel ,i controller`: the answer of map and of a finished learn.
    static let midiMappedReply = OSCMessageForm("/midi/mapped", .any)

    static let midiMap = OSCCommand(
        OSCCommandDescription(
            "/midi/map", section: .midi,
            summary: "Binds a MIDI control change (CC) to a parameter: the CC's 0…127 moves the parameter over its "
                + "whole range through its fader taper (0 → minimum, 127 → maximum; a toggle is on from 64, a choice "
                + "takes the nearest step). A channel/controller pair drives one parameter (mapping it again replaces "
                + "the target); a parameter may have several. Kept in the state, so it survives a restart; at most "
                + "\(MIDIMapping.maximumCount) mappings.",
            arguments: [
                Arg("s", "address", "a writable parameter's address."),
                Arg("i", "channel", "the MIDI channel, 1…16 (as musicians count; the wire's 0…15 plus one)."),
                Arg("i", "controller", "the controller number, 0…127."),
            ],
            reply: "`/midi/mapped ,s address ,i channel ,i controller`.",
            errors: ["an unknown or read-only address", "a channel outside 1…16 or a controller outside 0…127",
                     "\(MIDIMapping.maximumCount) mappings already kept"],
            examples: ["oscsend localhost 7700 /midi/map sii /output/gain 1 7"]),
        requests: [OSCMessageForm("/midi/map", .any)],
        replies: [midiMappedReply],
        prepare: { request in
            guard let midi = request.surface.midiControl else { return .reject(noMIDIControl) }
            guard request.arguments.count == 3, case .string(let address) = request.arguments[0],
                  let channel = request.arguments[1].integerValue, let controller = request.arguments[2].integerValue else {
                return .reject("expects ,s address ,i channel ,i controller")
            }
            let mapping: MIDIMapping
            do {
                mapping = try MIDIMapping(address: address, channel: channel, controller: controller)
                try midi.checkMap(mapping)
            } catch {
                return .reject("\(error)")
            }
            return .perform {
                do {
                    request.reply(mappedMessage(try midi.map(mapping)))
                } catch {
                    request.reject("\(error)")
                }
            }
        })

    static let midiUnmap = OSCCommand(
        OSCCommandDescription(
            "/midi/unmap", section: .midi,
            summary: "Removes MIDI mappings: every one that drives a parameter (`,s address`), or the one of a "
                + "channel and controller (`,i channel ,i controller`).",
            arguments: [Arg("s|i", "address | channel", "a parameter's address, or a channel 1…16 followed by a controller."),
                        Arg("i", "controller", "with a channel: the controller number, 0…127.", optional: true)],
            reply: "`/midi/unmapped ,s address ,i channel ,i controller` for each mapping removed.",
            errors: ["nothing is mapped there", "an unknown address", "a channel outside 1…16 or a controller outside 0…127"],
            examples: ["oscsend localhost 7700 /midi/unmap s /output/gain", "oscsend localhost 7700 /midi/unmap ii 1 7"]),
        requests: [OSCMessageForm("/midi/unmap", .any)],
        replies: [OSCMessageForm("/midi/unmapped", .any)],
        prepare: { request in
            guard let midi = request.surface.midiControl else { return .reject(noMIDIControl) }
            let arguments = request.arguments
            if arguments.count == 1, case .string(let address) = arguments[0] {
                guard ParameterModel.entry(at: address) != nil else { return .reject(ParameterError.unknownAddress(address).description) }
                guard midi.mappings.contains(where: { $0.address == address }) else { return .reject("no MIDI mapping drives \(address)") }
                return .perform {
                    let removed = midi.unmap(address: address)
                    guard !removed.isEmpty else { return request.reject("no MIDI mapping drives \(address)") }
                    for mapping in removed { request.reply(unmappedMessage(mapping)) }
                }
            }
            guard arguments.count == 2, let channel = arguments[0].integerValue, let controller = arguments[1].integerValue else {
                return .reject("expects ,s address or ,i channel ,i controller")
            }
            guard MIDIMapping.channels.contains(channel) else { return .reject("channel \(channel) is out of range 1…16") }
            guard MIDIMapping.controllers.contains(controller) else { return .reject("controller \(controller) is out of range 0…127") }
            let unmapped = "nothing is mapped to controller \(controller) on channel \(channel)"
            guard midi.mappings.contains(where: { $0.channel == channel && $0.controller == controller }) else {
                return .reject(unmapped)
            }
            return .perform {
                guard let removed = midi.unmap(channel: channel, controller: controller) else { return request.reject(unmapped) }
                request.reply(unmappedMessage(removed))
            }
        })

    static let midiList = OSCCommand(
        OSCCommandDescription(
            "/midi/list", section: .midi,
            summary: "Lists the MIDI mappings, ordered by channel and controller (at most \(MIDIMapping.maximumCount)).",
            reply: "`/midi/item ,s address ,i channel ,i controller` for each mapping, then `/midi/end ,i count`.",
            errors: ["any argument (it takes none)"],
            examples: ["oscsend localhost 7700 /midi/list"]),
        requests: [.bare("/midi/list")],
        replies: [OSCMessageForm("/midi/item", .any), OSCMessageForm("/midi/end", .any)],
        prepare: { request in
            guard let midi = request.surface.midiControl else { return .reject(noMIDIControl) }
            guard request.arguments.isEmpty else { return .reject("/midi/list takes no arguments") }
            return .perform {
                let mappings = midi.mappings
                for mapping in mappings {
                    request.reply(OSCMessage("/midi/item", [.string(mapping.address), .int32(Int32(mapping.channel)),
                                                           .int32(Int32(mapping.controller))]))
                }
                request.reply(OSCMessage("/midi/end", [.int32(Int32(mappings.count))]))
            }
        })

    static let midiLearn = OSCCommand(
        OSCCommandDescription(
            "/midi/learn", section: .midi,
            summary: "MIDI learn: the next control change that reaches SoundFit's MIDI input (`midi_in`) is mapped "
                + "to the parameter, as `/midi/map` would. One learn at a time: a new one ends the one in progress "
                + "(which answers `/error`).",
            arguments: [Arg("s", "address", "a writable parameter's address."),
                        Arg("i", "timeout_seconds", "how long to wait, \(MIDIControl.learnTimeouts.lowerBound)…"
                            + "\(MIDIControl.learnTimeouts.upperBound) s (default "
                            + "\(MIDIControl.defaultLearnTimeout.components.seconds) s).", optional: true)],
            reply: "`/midi/learning ,s address ,i timeout_seconds` at once, then `/midi/mapped ,s address ,i channel "
                + ",i controller` when a control change came; `/error` when the time ran out, on `/midi/learn/cancel` "
                + "or when another learn replaced it.",
            errors: ["an unknown or read-only address", "a timeout outside its range",
                     "no control change within the timeout", "cancelled or replaced",
                     "no MIDI input (`soundfit run --no-midi`)"],
            examples: ["oscsend localhost 7700 /midi/learn s /filter/cutoff    # then move a fader"]),
        requests: [OSCMessageForm("/midi/learn", .any)],
        replies: [OSCMessageForm("/midi/learning", .any), midiMappedReply],
        prepare: { request in
            guard let midi = request.surface.midiControl else { return .reject(noMIDIControl) }
            guard midi.port != nil else {
                return .reject("SoundFit runs without a MIDI input (--no-midi): no control change can come to learn from")
            }
            let arguments = request.arguments
            guard (1...2).contains(arguments.count), case .string(let address) = arguments[0] else {
                return .reject("expects ,s address [,i timeout_seconds]")
            }
            var seconds = Int(MIDIControl.defaultLearnTimeout.components.seconds)
            if arguments.count == 2 {
                guard let given = arguments[1].integerValue, MIDIControl.learnTimeouts.contains(given) else {
                    return .reject("timeout_seconds must be an int in \(MIDIControl.learnTimeouts.lowerBound)…\(MIDIControl.learnTimeouts.upperBound)")
                }
                seconds = given
            }
            do {
                // Any channel and controller will do for checking the address.
                _ = try MIDIMapping(address: address, channel: 1, controller: 0, request: "/midi/learn")
            } catch {
                return .reject("\(error)")
            }
            let timeout = seconds
            return .perform {
                request.answerLater {
                    // `/midi/learning` once the learn is in progress: a cancel sent on it finds it.
                    let mapping = try await midi.learn(address, timeout: .seconds(timeout)) {
                        request.reply(OSCMessage("/midi/learning", [.string(address), .int32(Int32(timeout))]))
                    }
                    request.reply(mappedMessage(mapping))
                }
            }
        })

    static let midiLearnCancel = OSCCommand(
        OSCCommandDescription(
            "/midi/learn/cancel", section: .midi,
            summary: "Ends the MIDI learn in progress without mapping anything.",
            reply: "`/midi/learn/cancelled ,s address` (the learn itself answers `/error`).",
            errors: ["no learn is in progress", "any argument (it takes none)"],
            examples: ["oscsend localhost 7700 /midi/learn/cancel"]),
        requests: [.bare("/midi/learn/cancel")],
        replies: [OSCMessageForm("/midi/learn/cancelled", .any)],
        prepare: { request in
            guard let midi = request.surface.midiControl else { return .reject(noMIDIControl) }
            guard request.arguments.isEmpty else { return .reject("/midi/learn/cancel takes no arguments") }
            return .perform {
                guard let address = midi.cancelLearn() else { return request.reject("no MIDI learn is in progress") }
                request.reply(OSCMessage("/midi/learn/cancelled", [.string(address)]))
            }
        })

    static let noMIDIControl = "MIDI control is not available"

    static func mappedMessage(_ mapping: MIDIMapping) -> OSCMessage {
        OSCMessage("/midi/mapped", [.string(mapping.address), .int32(Int32(mapping.channel)), .int32(Int32(mapping.controller))])
    }

    static func unmappedMessage(_ mapping: MIDIMapping) -> OSCMessage {
        OSCMessage("/midi/unmapped", [.string(mapping.address), .int32(Int32(mapping.channel)), .int32(Int32(mapping.controller))])
    }
}
