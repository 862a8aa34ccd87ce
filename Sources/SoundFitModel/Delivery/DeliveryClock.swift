/// The injected clock, reduced to what delivery (settle times, timeouts) and the state store need: "now"
/// and "sleep until".
///
/// Times are offsets from the instant the adapter was made, so the rest of the module works
/// with plain `Duration`s instead of an existential `any InstantProtocol`. Deadlines are always
/// computed once, when the event that starts them happens, and slept until as absolute times:
/// on a virtual clock that makes every timer fire at exactly the same virtual instant no matter
/// when the sleeping task gets scheduled.
public struct DeliveryClock: Sendable {
    /// Time elapsed since the adapter was made.
    public let now: @Sendable () -> Duration
    /// Suspends until `now() >= deadline`; throws `CancellationError` when cancelled.
    public let sleep: @Sendable (_ deadline: Duration) async throws -> Void

    public init(_ clock: any Clock<Duration>) {
        self = Self.adapting(clock)
    }

    private static func adapting<C: Clock<Duration>>(_ clock: C) -> DeliveryClock {
        let origin = clock.now
        return DeliveryClock(
            now: { origin.duration(to: clock.now) },
            sleep: { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) })
    }

    private init(now: @escaping @Sendable () -> Duration,
                 sleep: @escaping @Sendable (_ deadline: Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }
}
