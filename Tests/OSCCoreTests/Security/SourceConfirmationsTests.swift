import OSCCore
import Testing

/// An unconfirmed source is answered at most 3× what it sent; a source confirms its
/// address by echoing a token only that address receives.
@Suite struct SourceConfirmationsTests {
    private let victim = OSCPeer(host: "10.0.0.9", port: 9000)!.address
    private let other = OSCPeer(host: "10.0.0.8", port: 9000)!.address

    @Test func anUnconfirmedSourceGetsThreeTimesWhatItSent() {
        var budgets = SourceBudgets()
        let result1 = budgets.spend(1, to: victim, at: .zero, confirmed: false)
        #expect(result1 == .overRatio)
        budgets.received(20, from: victim, at: .zero)
        let result2 = budgets.spend(60, to: victim, at: .zero, confirmed: false)
        #expect(result2 == .allowed)
        let result3 = budgets.spend(1, to: victim, at: .zero, confirmed: false)
        #expect(result3 == .overRatio)
        // Confirmed, only the rate counts.
        let result4 = budgets.spend(1000, to: victim, at: .zero, confirmed: true)
        #expect(result4 == .allowed)
        #expect(budgets.droppedCount == 2 && budgets.droppedForRatioCount == 2)
        // What it earns is kept up to the burst, not more.
        budgets.received(1_000_000, from: other, at: .zero)
        let result5 = budgets.spend(SourceBudgets.defaultBurstBytes + 1, to: other, at: .seconds(100), confirmed: false)
        #expect(result5 != .allowed)
    }

    @Test func theTokenConfirmsItsAddressOnlyAndExpires() {
        var confirmations = SourceConfirmations()
        let token = confirmations.token(for: victim, at: .seconds(5))
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit))
        #expect(token != confirmations.token(for: other, at: .seconds(5)))
        let result6 = confirmations.confirm(token, from: other, at: .seconds(6))
        #expect(!result6)
        #expect(!confirmations.isConfirmed(victim, at: .seconds(6)))
        // Two windows later the token is stale.
        let result7 = confirmations.confirm(token, from: victim, at: .seconds(65))
        #expect(!result7)
        let result8 = confirmations.confirm(token, from: victim, at: .seconds(31))
        #expect(result8)
        #expect(confirmations.isConfirmed(victim, at: .seconds(31)))
        // Heard from, it stays confirmed; silent for the lifetime, it is not any more.
        confirmations.heard(from: victim, at: .seconds(500))
        #expect(confirmations.isConfirmed(victim, at: .seconds(1000)))
        #expect(!confirmations.isConfirmed(victim, at: .seconds(1100)))
        // Another process has another secret.
        #expect(SourceConfirmations().token(for: victim, at: .zero) != SourceConfirmations().token(for: victim, at: .zero))
    }

    @Test func theConfirmedTableIsBounded() {
        var confirmations = SourceConfirmations(capacity: 4)
        for index in 0..<10 { confirmations.confirm(UInt32(index), at: .seconds(Int64(index))) }
        #expect(confirmations.confirmedCount == 4)
        #expect(confirmations.isConfirmed(9, at: .seconds(10)) && !confirmations.isConfirmed(0, at: .seconds(10)))
    }
}
