/// Every command SoundFit answers over OSC and every report it sends: one `OSCCommand` each,
/// holding its address, request and reply forms, handler and documentation. Routing, the
/// reply recogniser and docs/OSC.md all derive from this table. The contract's names are
/// stable: extend, never rename.
enum OSCCommandTable {
    typealias Arg = OSCCommandDescription.Argument

    /// Commands and reports, in documentation order.
    static let entries: [OSCCommand] = ([
        discovery, sources, subscriptions, configuration, session, profile, patches, midi, hearingTest, calibrationCommands, meters,
        reports,
    ] as [[OSCCommand]]).flatMap { $0 }

    private static let commandsByAddress: [String: OSCCommand] = Dictionary(
        uniqueKeysWithValues: entries.filter { $0.prepare != nil }.map { ($0.address, $0) })

    /// The command answering `address`, if it is one.
    static func command(at address: String) -> OSCCommand? { commandsByAddress[address] }
}

extension OSCCommandDescription {
    /// Every command of the OSC contract and the reports SoundFit sends, in documentation
    /// order: the command table's documentation.
    public static let all: [OSCCommandDescription] = OSCCommandTable.entries.map(\.documentation)
}

extension OSCControlSurface {
    /// The command addresses this surface answers (besides the parameters): every command of
    /// the table (not the reports), in documentation order.
    public static let commandAddresses = OSCCommandTable.entries.filter { $0.prepare != nil }.map(\.address)
}
