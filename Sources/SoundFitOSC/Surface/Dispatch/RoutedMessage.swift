/// Where one message of a packet goes, decided before anything is answered, so a whole packet
/// can be validated before any of it takes effect.
enum RoutedMessage: Sendable {
    /// A message that can only be a reply (see `OSCCommandTable.isReply`): never answered.
    case reply
    /// A command of the table whose request was checked: `work` answers it.
    case command(_ work: @Sendable () -> Void)
    /// A parameter query, answered with the current value.
    case query(ParameterQuery)
    /// An address pattern's query: every matching parameter's value, in model order.
    case queries([ParameterQuery])
    /// A validated parameter set, requested together with the other sets of its packet.
    case set(ParameterSet)
    /// An address pattern's set: every matching parameter that accepts the value.
    case sets([ParameterSet])
    /// Rejected: answered with `/error ,s address ,s reason`, then, for a fader (a normalized
    /// set), with the parameter's current position (`snapBack`) so the fader jumps back to it.
    case rejected(address: String, reason: String, snapBack: ParameterQuery? = nil)
}
