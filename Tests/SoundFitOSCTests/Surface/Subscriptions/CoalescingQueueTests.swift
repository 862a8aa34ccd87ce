import SoundFitOSC
import Testing

@Suite struct CoalescingQueueTests {
    private func describe(_ entries: [(key: String, value: Int)]) -> String {
        entries.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    @Test func latestValueWinsInFirstEnqueuedOrder() {
        var queue = CoalescingQueue<String, Int>()
        #expect(queue.enqueue(1, for: "a") == nil)
        #expect(queue.enqueue(2, for: "b") == nil)
        #expect(queue.enqueue(3, for: "a") == 1)
        #expect(queue.count == 2)
        #expect(queue["a"] == 3)
        #expect(describe(queue.drain()) == "a=3 b=2")
        #expect(queue.isEmpty)
        #expect(describe(queue.drain()) == "")
        queue.enqueue(4, for: "b")
        #expect(describe(queue.drain()) == "b=4")
    }

    @Test func aFloodStaysOneEntryPerKey() {
        var queue = CoalescingQueue<String, Int>()
        for value in 0..<10_000 { queue.enqueue(value, for: value.isMultiple(of: 2) ? "even" : "odd") }
        #expect(queue.count == 2)
        #expect(describe(queue.drain()) == "even=9998 odd=9999")
    }
}
