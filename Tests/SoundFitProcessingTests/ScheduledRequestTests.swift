import SoundFitModel
import SoundFitTestSupport
import Synchronization
import Testing
@testable import SoundFitProcessing

/// A request scheduled for a moment (an OSC bundle with a future timetag): a streaming
/// applicator is handed the moment with the value, and the delivery timeout counts from the
/// moment, not from the request.
@Suite(.timeLimit(.minutes(1)))
struct ScheduledRequestTests {
    let clock = ManualClock()

    @Test func aScheduledValueIsHandedOverWithItsMomentAndItsTimeoutCountsFromThen() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryTimeout: .milliseconds(200)), clock: clock)
        let handedOver = Mutex<[EngineTime?]>([])
        let applicator = parameter.addStreamingApplicator(scheduling: { _, time in
            handedOver.withLock { $0.append(time) }
            return { try await clock.sleep(for: .seconds(3600)) }  // never confirms: only a timeout ends it
        })
        let moment = EngineTime.now.advanced(bySeconds: 0.5)
        let request = try parameter.request(1, at: moment)
        let now = try parameter.request(2)
        #expect(handedOver.withLock { $0 } == [moment, nil])

        // Past the timeout as counted from the request, before it as counted from the moment.
        await clock.advance(by: .milliseconds(600))
        await yieldMany()
        #expect(parameter.bufferedValueCount == 1, "only the scheduled request is still in flight")
        await clock.advance(by: .milliseconds(200))
        let states = await allStates(request)
        #expect(states.first == "applying(1)" && states.count == 2 && states[1].hasPrefix("failed(1"), "\(states)")
        #expect(await allStates(now).last?.hasPrefix("failed(2") == true)
        withExtendedLifetime(applicator) {}
    }
}
