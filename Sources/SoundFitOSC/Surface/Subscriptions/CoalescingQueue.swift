/// A queue that holds at most one value per key: enqueueing a key that is already waiting
/// replaces its value in place (latest wins, first-enqueued order kept). Its size is bounded by
/// the number of distinct keys, however many values are enqueued.
///
/// A plain value type; the owner provides any locking.
public struct CoalescingQueue<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private var order: [Key] = []
    private var values: [Key: Value] = [:]

    public init() {}

    public var count: Int { order.count }
    public var isEmpty: Bool { order.isEmpty }

    /// Records `value` for `key`; returns the value it replaced, if one was waiting.
    @discardableResult
    public mutating func enqueue(_ value: Value, for key: Key) -> Value? {
        let replaced = values.updateValue(value, forKey: key)
        if replaced == nil { order.append(key) }
        return replaced
    }

    /// The waiting value for `key`.
    public subscript(key: Key) -> Value? { values[key] }

    /// Removes and returns every waiting entry, in the order their keys were first enqueued.
    public mutating func drain() -> [(key: Key, value: Value)] {
        let entries = order.map { (key: $0, value: values[$0]!) }
        order.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        return entries
    }
}
