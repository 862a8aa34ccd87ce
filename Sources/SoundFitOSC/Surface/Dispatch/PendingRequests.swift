import OSCCore
import Synchronization

/// The requests of each sender still on their way to a terminal state, and the `/sync`s
/// waiting for them. As scsynth's `/sync`: a client that sends `/sync` after some requests
/// gets `/synced` once each of them reached its end (a set's last `/state`, a command's
/// answer), so tests and scripts wait on that event instead of on time.
///
/// Requests are numbered in the order they were accepted; a `/sync` waits for every number
/// its sender had been given before it. Nothing is kept for a sender with no request under
/// way and no `/sync` waiting.
///
/// Thread rules: `begin` and `sync` on a transport's receive thread (so numbers follow arrival
/// order); `end` from the task that answered the request. Answers run outside the lock.
final class PendingRequests: Sendable {
    /// `/sync`s one sender may have waiting at once; more are refused, so a client that never
    /// lets its requests finish cannot grow the list.
    static let maximumWaitingSyncs = 64

    /// One request under way, to be handed back to `end`.
    struct Ticket: Sendable {
        fileprivate let sender: OSCSender
        fileprivate let number: UInt64
    }

    private struct Waiting {
        /// The last request number given out before the `/sync`.
        let through: UInt64
        let answer: @Sendable () -> Void
    }

    private struct Sender {
        var underWay: Set<UInt64> = []
        var waiting: [Waiting] = []
    }

    private struct State {
        var nextNumber: UInt64 = 1
        var senders: [OSCSender: Sender] = [:]
    }

    private let state = Mutex(State())

    /// A request of `sender` was accepted and will be answered later.
    func begin(_ sender: OSCSender) -> Ticket {
        state.withLock { state in
            let number = state.nextNumber
            state.nextNumber += 1
            state.senders[sender, default: Sender()].underWay.insert(number)
            return Ticket(sender: sender, number: number)
        }
    }

    /// The request of `ticket` reached its end (its last answer was sent).
    func end(_ ticket: Ticket) {
        let due = state.withLock { state -> [Waiting] in
            guard var sender = state.senders[ticket.sender] else { return [] }
            sender.underWay.remove(ticket.number)
            let oldest = sender.underWay.min() ?? .max
            let due = sender.waiting.filter { $0.through < oldest }
            sender.waiting.removeAll { $0.through < oldest }
            state.senders[ticket.sender] = sender.underWay.isEmpty && sender.waiting.isEmpty ? nil : sender
            return due
        }
        for waiting in due { waiting.answer() }
    }

    /// Runs `answer` once every request `sender` began before now has ended: at once when none
    /// is under way. False (and `answer` is not kept) when the sender already has
    /// `maximumWaitingSyncs` waiting.
    func sync(_ sender: OSCSender, _ answer: @escaping @Sendable () -> Void) -> Bool {
        enum Outcome { case now, later, refused }
        let outcome = state.withLock { state -> Outcome in
            guard var entry = state.senders[sender], !entry.underWay.isEmpty else { return .now }
            guard entry.waiting.count < Self.maximumWaitingSyncs else { return .refused }
            entry.waiting.append(Waiting(through: state.nextNumber - 1, answer: answer))
            state.senders[sender] = entry
            return .later
        }
        switch outcome {
        case .now: answer()
        case .later: break
        case .refused: return false
        }
        return true
    }
}
