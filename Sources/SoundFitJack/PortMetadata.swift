/// What SoundFit tells patchbays about its ports through JACK metadata (the standard keys of
/// `jack/metadata.h`): a pretty name that says which ear a port carries, the order to list the
/// ports in, and port groups that pair each left/right channel pair.
///
/// Channels follow the personalization's convention: channel 1, 3, 5… is the left ear, 2, 4, 6…
/// the right; a mono client's one channel is the left ear.
enum PortMetadata {
    /// "Left ear in 1", "Right ear out 2", …: the ear, the direction, and the pair number.
    static func prettyName(channel: Int, isInput: Bool) -> String {
        let ear = channel % 2 == 0 ? "Left" : "Right"
        return "\(ear) ear \(isInput ? "in" : "out") \(channel / 2 + 1)"
    }

    /// Ports sort by channel: 1, 2, 3…
    static func order(channel: Int) -> String { "\(channel + 1)" }

    /// The left/right pair a channel belongs to: "Ears in 1", "Ears out 1", …
    static func portGroup(channel: Int, isInput: Bool) -> String {
        "Ears \(isInput ? "in" : "out") \(channel / 2 + 1)"
    }

    /// The MIDI control input (CC → parameters, program change → factory patch).
    static let midiPrettyName = "MIDI control in"

    /// The MIDI input is listed after the audio ports.
    static func midiOrder(channelCount: Int) -> String { "\(channelCount + 1)" }

    /// The XML Schema type JACK metadata uses for integer values such as the order.
    static let integerType = "http://www.w3.org/2001/XMLSchema#integer"
}
