/// The connections of this client's ports, kept up to date from JACK's port-connect and
/// port-registration callbacks, so that a returning server gets back exactly the connections
/// that existed when the old one died — also those made or removed a moment before — and a
/// port that goes away and comes back (a netjack2 master restarted, a USB interface replugged,
/// PipeWire re-creating a node, a player restarted) gets its connections back.
///
/// A connection removed because the other port went away is not the user's choice: it waits
/// for that port (`awaitingPorts`). A removal counts as the port's when the port is already gone
/// when the removal is reported, or when the port's unregistration follows within
/// `claimWindow` (JACK reports a port's disconnections before the port itself goes, and a
/// client that deactivates and then closes does it in that order too). A connection the user
/// removes from a port that stays is forgotten.
///
/// A pure value: `JackClientConnection` keeps it under a lock and feeds it the callbacks' events.
struct PortConnections: Sendable {
    /// One connection, as JACK names it: from an output port to an input port.
    struct Connection: Hashable, Sendable {
        var source: String
        var destination: String
    }

    /// How long after a removal the other port's unregistration still claims it.
    static let claimWindow: Duration = .seconds(2)

    /// In the order they were made, so restoring replays them in that order.
    private(set) var connections: [Connection] = []
    /// Removed while the other port still existed, with when: the user's, unless that port
    /// goes away within `claimWindow`.
    private var recentlyRemoved: [(connection: Connection, at: ContinuousClock.Instant)] = []
    /// Removed because the other port went away, in the order they were made: restored when
    /// a port of that name is registered again.
    private(set) var awaitingPorts: [Connection] = []

    /// What a returning server gets back: the live connections, then those waiting for a port.
    var connectionsToRestore: [Connection] { connections + awaitingPorts.filter { !connections.contains($0) } }

    /// Records a connection made; a connection already known is kept where it is.
    mutating func connected(_ connection: Connection) {
        if !connections.contains(connection) { connections.append(connection) }
        awaitingPorts.removeAll { $0 == connection }
        recentlyRemoved.removeAll { $0.connection == connection }
    }

    /// Records a connection removed at `now`; `otherPortGone`: the other port no longer
    /// exists (the removal is the port's, not the user's).
    mutating func disconnected(_ connection: Connection, otherPortGone: Bool, at now: ContinuousClock.Instant) {
        guard connections.contains(connection) else { return }
        connections.removeAll { $0 == connection }
        recentlyRemoved.removeAll { now - $0.at > Self.claimWindow || $0.connection == connection }
        if otherPortGone {
            awaitingPorts.append(connection)
        } else {
            recentlyRemoved.append((connection, now))
        }
    }

    /// The port `name` (not ours) was unregistered at `now`: the connections to it removed
    /// within `claimWindow` wait for it. Returns the connections that wait for it now.
    mutating func portWentAway(_ name: String, at now: ContinuousClock.Instant) -> [Connection] {
        let claimed = recentlyRemoved.filter {
            now - $0.at <= Self.claimWindow && ($0.connection.source == name || $0.connection.destination == name)
        }.map(\.connection)
        recentlyRemoved.removeAll { claimed.contains($0.connection) }
        awaitingPorts += claimed.filter { !awaitingPorts.contains($0) }
        return awaitingPorts.filter { $0.source == name || $0.destination == name }
    }

    /// Makes `connection` wait for its missing port (a connection a returning server could not
    /// restore yet).
    mutating func await(_ connection: Connection) {
        if !connections.contains(connection) && !awaitingPorts.contains(connection) { awaitingPorts.append(connection) }
    }

    /// The connections waiting for the port `name`, which was registered again.
    func awaiting(_ name: String) -> [Connection] {
        awaitingPorts.filter { $0.source == name || $0.destination == name }
    }

    /// Adds connections found by asking the server (after activation and restoring).
    mutating func merge(_ found: [Connection]) {
        for connection in found { connected(connection) }
    }
}
