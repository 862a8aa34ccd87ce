import OSCCore
import Testing

/// The per-source answer budget of an exposed port: a token bucket per address, bounded table.
@Suite struct SourceBudgetsTests {
    private let victim = OSCPeer(host: "10.0.0.9", port: 9000)!.address

    @Test func aSourceGetsItsBurstThenItsRate() {
        var budgets = SourceBudgets(bytesPerSecond: 1000, burstBytes: 4000, maximumSources: 8)
        var sent = 0
        for _ in 0..<100 where budgets.spend(100, to: victim, at: .zero) { sent += 100 }
        #expect(sent == 4000)
        #expect(budgets.droppedCount == 60)
        // Half a second later: 500 bytes more, not more.
        let spent1 = budgets.spend(500, to: victim, at: .milliseconds(500))
        #expect(spent1)
        let spent2 = budgets.spend(1, to: victim, at: .milliseconds(500))
        #expect(!spent2)
        // Idle for long: never more than the burst.
        let spent3 = budgets.spend(4001, to: victim, at: .seconds(100))
        #expect(!spent3)
        let spent4 = budgets.spend(4000, to: victim, at: .seconds(100))
        #expect(spent4)
    }

    @Test func sourcesHaveTheirOwnBuckets() {
        var budgets = SourceBudgets(bytesPerSecond: 1000, burstBytes: 1000, maximumSources: 8)
        let other = OSCPeer(host: "10.0.0.8", port: 1)!.address
        let spent5 = budgets.spend(1000, to: victim, at: .zero)
        #expect(spent5)
        let spent6 = budgets.spend(1, to: victim, at: .zero)
        #expect(!spent6)
        let spent7 = budgets.spend(1000, to: other, at: .zero)
        #expect(spent7)
    }

    @Test func theTableIsBoundedAndForgetsTheLeastRecentlyUsed() {
        var budgets = SourceBudgets(bytesPerSecond: 10, burstBytes: 100, maximumSources: 16)
        let spent0 = budgets.spend(100, to: victim, at: .seconds(1000))  // the victim's bucket is empty and recent
        #expect(spent0)
        for index in 0..<3000 {
            _ = budgets.spend(10, to: UInt32(index).bigEndian, at: .seconds(Int64(index % 500)))
            #expect(budgets.trackedSourceCount <= 16)
        }
        #expect(budgets.trackedSourceCount == 16)
        // 3 000 other addresses, all used earlier than the victim: its empty bucket was kept.
        let spent8 = budgets.spend(100, to: victim, at: .seconds(1000))
        #expect(!spent8)
    }
}
