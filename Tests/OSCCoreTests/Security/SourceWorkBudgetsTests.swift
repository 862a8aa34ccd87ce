import OSCCore
import Testing

/// Each source's share of the receive thread.
@Suite struct SourceWorkBudgetsTests {
    private let heavy = OSCPeer(host: "127.0.0.1", port: 9000)!
    private let light = OSCPeer(host: "127.0.0.1", port: 9001)!

    @Test func aHeavySourceIsDroppedOnceItsBurstIsSpentAndToldOnce() {
        var budgets = SourceWorkBudgets(share: 0.2, burst: .milliseconds(100))
        var time = Duration.zero
        var handled = 0
        var refusals = 0
        // 60 ms packets, back to back, for one second.
        while time < .seconds(1) {
            switch budgets.admit(heavy, at: time) {
            case .handle:
                handled += 1
                budgets.charge(.milliseconds(60), to: heavy)
                time += .milliseconds(60)
            case .refuse: refusals += 1; time += .microseconds(10)
            case .drop: time += .microseconds(10)
            }
        }
        // Its burst (two packets) plus 20 % of the second (about three more); back to back, 17.
        #expect((4...6).contains(handled), "\(handled)")
        #expect(refusals >= 1 && refusals <= handled)
        // Another source is handled at once.
        let result9 = budgets.admit(light, at: time)
        #expect(result9 == .handle)
    }
}
