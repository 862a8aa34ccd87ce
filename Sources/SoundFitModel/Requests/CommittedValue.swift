/// A parameter's value as its requests and its change feed see it: the value of the newest
/// request that took effect, and what the feed last carried. The feed follows persistence, so
/// it lags the value while the journal is written ("applied", and its feedback, survive a
/// `kill -9`).
///
/// A value kept under its parameter's lock (a session's `ProcessingParameter`, a
/// `KernelParameter`): `take` when a request's value took effect, then, once it is persisted,
/// `announcement(for:)` says whether the feed is to carry a change.
public struct CommittedValue<Value: Sendable & Equatable>: Sendable {
    /// The value of the newest request that took effect (the initial value before any).
    public private(set) var value: Value
    /// The request whose value `value` is (0: the initial value).
    public private(set) var requestID: UInt64 = 0
    /// The value the feed last carried, while it differs from `value`; nil when it carries it.
    private var announced: Value?

    public init(_ value: Value) {
        self.value = value
    }

    /// Request `requestID`'s value took effect: taken unless a newer request's value was taken
    /// first (overlapping deliveries end in any order). Returns whether the value changed.
    @discardableResult
    public mutating func take(_ value: Value, requestID: UInt64) -> Bool {
        guard requestID > self.requestID else { return false }
        self.requestID = requestID
        guard self.value != value else { return false }
        if announced == nil { announced = self.value }
        self.value = value
        return true
    }

    /// Request `requestID`'s value is persisted: the value the feed is to carry now, or nil when
    /// a newer request's value is in effect (it announces itself) or the feed carries it already.
    public mutating func announcement(for requestID: UInt64) -> Value? {
        guard requestID == self.requestID, let announced, announced != value else { return nil }
        self.announced = nil
        return value
    }
}
