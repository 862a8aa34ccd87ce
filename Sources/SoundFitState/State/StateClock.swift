/// The injected clock reduced to "now" and "sleep until", as offsets from the adapter's
/// creation, so the store works with plain `Duration`s (a virtual clock in tests).
struct StateClock: Sendable {
    let now: @Sendable () -> Duration
    /// Suspends until `now() >= deadline`; throws `CancellationError` when cancelled.
    let sleep: @Sendable (_ deadline: Duration) async throws -> Void

    init(_ clock: any Clock<Duration>) {
        self = Self.adapting(clock)
    }

    private static func adapting<C: Clock<Duration>>(_ clock: C) -> StateClock {
        let origin = clock.now
        return StateClock(
            now: { origin.duration(to: clock.now) },
            sleep: { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) })
    }

    private init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (_ deadline: Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }
}
