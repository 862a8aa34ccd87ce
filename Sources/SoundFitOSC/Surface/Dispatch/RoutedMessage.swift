/// Where one message of a packet goes, decided before anything is answered, so a whole packet
/// can be validated before any of it takes effect.
enum RoutedMessage: Sendable {
    /// A message that can only be a reply (see `OSCCommandTable.isReply`): never answered.
    case reply
    /// A command of the table.
    case command(OSCCommand, OSCMessage)
    /// A parameter query, answered with the current value.
    case query(ParameterQuery)
    /// A validated parameter set, requested together with the other sets of its packet.
    case set(RoutedParameterRequest)
    /// Rejected: answered with `/error ,s address ,s reason`.
    case rejected(address: String, reason: String)
}
