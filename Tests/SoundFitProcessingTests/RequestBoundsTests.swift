import SoundFitModel
import SoundFitTestSupport
import Testing
@testable import SoundFitProcessing

/// What a flood of requests from distinct clients can make a parameter keep: the requests that
/// have not ended (at most the deliveries in flight and one waiting value), each with its
/// origin. A newer value supersedes the waiting one, so its reporter and origin are released.
@Suite(.timeLimit(.minutes(1)))
struct RequestBoundsTests {
    @Test func originsAndReportersAreBoundedByTheRequestsInFlight() throws {
        let clock = ManualClock()
        let engine = FakeStreamingEngine()
        let parameter = ProcessingParameter(0, config: .default, clock: clock)
        let applicator = parameter.addStreamingApplicator { engine.submit($0) }
        let bound = DeliveryStateMachine<Int>.defaultMaximumOverlap + 1
        var largest = 0
        for index in 1...3000 {
            // A distinct origin each time: 3 000 clients, none of whose requests is confirmed yet.
            _ = try parameter.request(index, origin: RequestOrigin("client-\(index)"))
            let (origins, reporters) = parameter.state.withLock { ($0.origins.count, $0.reporters.count) }
            largest = max(largest, origins, reporters)
        }
        #expect(largest <= bound, "\(largest) requests kept for 3 000 (bound \(bound))")
        #expect(parameter.bufferedValueCount <= bound)
        withExtendedLifetime(applicator) {}
    }
}
