import SoundFitModel
import Synchronization
@testable import SoundFitProcessing

/// A door that tasks wait at until the test opens it; for slow or stuck applicators.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }
}

/// Holds a delivery in flight: the applicator calls `hold()`, which tells the test it got there
/// (`reached()` returns) and waits until the test calls `release()`.
final class DeliveryHold: Sendable {
    private let arrived = Gate()
    private let released = Gate()

    func hold() async {
        arrived.open()
        await released.wait()
    }

    /// Waits until an applicator is in `hold()`.
    func reached() async { await arrived.wait() }

    func release() { released.open() }
}

/// Records events (applicator calls, handler writes) and lets a test wait for them.
final class Recorder<Event: Sendable>: Sendable {
    private let log = Mutex<[Event]>([])

    init() {}

    func record(_ event: Event) {
        log.withLock { $0.append(event) }
    }

    /// Everything recorded so far.
    var events: [Event] { log.withLock { $0 } }

    /// Waits until `count` events in total were recorded.
    func waitForCount(_ count: Int) async {
        while events.count < count { await Task.yield() }
    }
}

/// All states of a request, read after it ended.
func allStates<Value>(_ request: ParameterRequest<Value>) async -> [String] {
    var states: [String] = []
    for await state in request.states { states.append(state.description) }
    return states
}

/// A test error with a name.
struct TestError: Error, Equatable, CustomStringConvertible {
    var name: String
    init(_ name: String) { self.name = name }
    var description: String { name }
}


/// The first `count` elements of a stream (waits for them).
func take<Element>(_ count: Int, from stream: AsyncStream<Element>) async -> [Element] {
    var elements: [Element] = []
    guard count > 0 else { return elements }
    for await element in stream {
        elements.append(element)
        if elements.count == count { break }
    }
    return elements
}
