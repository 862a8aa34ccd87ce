/// What the UDP and the TCP test client share: the messages received and not yet consumed, and
/// how they are consumed. The clients differ only in how they read and split what arrives.
protocol OSCTestReceiving: AnyObject {
    /// Received but not yet consumed.
    var pending: [OSCTestMessage] { get set }
    /// Reads what arrives within `timeout` into `pending` (returns early once `stopEarly` holds).
    func receive(for timeout: Duration, stopEarly: () -> Bool)
}

extension OSCTestReceiving {
    /// Consumes pending messages up to and including the first one matching `predicate`,
    /// receiving more until `timeout` if none is pending. Returns the match and the messages
    /// consumed before it; nil (nothing consumed) if no match arrived.
    func takeFirst(timeout: Duration,
                   where predicate: (OSCTestMessage) -> Bool) -> (match: OSCTestMessage, before: [OSCTestMessage])? {
        if pending.firstIndex(where: predicate) == nil {
            receive(for: timeout) { pending.contains(where: predicate) }
        }
        guard let index = pending.firstIndex(where: predicate) else { return nil }
        let before = Array(pending[..<index])
        let match = pending[index]
        pending.removeFirst(index + 1)
        return (match, before)
    }

    /// Whatever arrives within `duration`, with what was pending, consumed.
    func collect(for duration: Duration) -> [OSCTestMessage] {
        receive(for: duration) { false }
        defer { pending.removeAll() }
        return pending
    }

    /// Drops pending messages and whatever arrives within `duration` (`.zero`: what is
    /// already queued).
    func drain(for duration: Duration = .zero) {
        receive(for: duration) { false }
        pending.removeAll()
    }
}
