/// The connections of this client's ports, kept up to date from JACK's port-connect callback,
/// so that a returning server gets back exactly the connections that existed when the old one
/// died — also those made or removed a moment before.
///
/// A pure value: `JackClientConnection` keeps it under a lock and feeds it the callback's events.
struct PortConnections: Sendable, Equatable {
    /// One connection, as JACK names it: from an output port to an input port.
    struct Connection: Hashable, Sendable {
        var source: String
        var destination: String
    }

    /// In the order they were made, so restoring replays them in that order.
    private(set) var connections: [Connection] = []

    /// Records a connection made; a connection already known is kept where it is.
    mutating func connected(_ connection: Connection) {
        if !connections.contains(connection) { connections.append(connection) }
    }

    /// Records a connection removed.
    mutating func disconnected(_ connection: Connection) {
        connections.removeAll { $0 == connection }
    }

    /// Adds connections found by asking the server (after activation and restoring).
    mutating func merge(_ found: [Connection]) {
        for connection in found { connected(connection) }
    }
}
