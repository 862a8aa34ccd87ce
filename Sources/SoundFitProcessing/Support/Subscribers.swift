import Synchronization

/// The open `AsyncStream`s of one published value (a parameter's values or update states, the
/// controller's session, the runtime's change feed).
///
/// Owners call `subscribe` and `yield` while holding their own lock, so every subscriber sees
/// the current element first and then every change in the order the owner made them. The
/// streams buffer without bound: a subscriber must keep consuming.
public final class Subscribers<Element: Sendable>: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// A new stream that starts with `current`.
    public func subscribe(current: Element) -> AsyncStream<Element> {
        makeStream(first: current)
    }

    /// A new stream of the elements yielded from now on.
    public func subscribe() -> AsyncStream<Element> {
        makeStream(first: nil)
    }

    /// A registered stream; `first`, if any, is buffered before registration, so no element
    /// yielded meanwhile can come ahead of it.
    private func makeStream(first: Element?) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        if let first { continuation.yield(first) }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.continuations[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    public func yield(_ element: Element) {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.yield(element) }
        }
    }

    deinit {
        state.withLock { state in state.continuations.values.forEach { $0.finish() } }
    }
}
