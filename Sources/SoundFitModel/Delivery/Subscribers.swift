import Synchronization

/// The open `AsyncStream`s of one published value (a parameter's values or update states, the
/// controller's session, the runtime's change feed), and its observers.
///
/// Owners call `subscribe` and `yield` while holding their own lock, so every subscriber sees
/// the current element first and then every change in the order the owner made them. The
/// streams buffer without bound: a subscriber must keep consuming.
///
/// An observer (`observe`) sees each element inside `yield`, on the yielding thread, before the
/// owner goes on: the hops of the change feed use it, so a change reaches subscriber feedback
/// before its request is reported applied, and `/sync` orders value feedback too.
public final class Subscribers<Element: Sendable>: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var observers: [UInt64: @Sendable (Element) -> Void] = [:]
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

    /// Calls `body` with every element yielded from now on, inside `yield` and in its order, on
    /// the yielding thread (which may hold the owner's lock: `body` must be quick, must not
    /// block and must not call back into the owner). Observing ends with `stopObserving` or
    /// with this object.
    public func observe(_ body: @escaping @Sendable (Element) -> Void) -> Observation {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.observers[state.nextID] = body
            return state.nextID
        }
        return Observation(id: id)
    }

    /// Ends an observation; `yield`s after it returns no longer call its body.
    public func stopObserving(_ observation: Observation) {
        _ = state.withLock { $0.observers.removeValue(forKey: observation.id) }
    }

    /// Names one `observe` registration.
    public struct Observation: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    public func yield(_ element: Element) {
        state.withLock { state in
            for continuation in state.continuations.values { continuation.yield(element) }
            for observer in state.observers.values { observer(element) }
        }
    }

    deinit {
        state.withLock { state in state.continuations.values.forEach { $0.finish() } }
    }
}
