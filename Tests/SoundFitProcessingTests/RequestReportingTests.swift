import SoundFitModel
import SoundFitTestSupport
import Testing
@testable import SoundFitProcessing

/// A request's states reach the requester in its own value type, and its change carries the
/// requester's origin, without anything between the parameter and the requester.
@Suite(.timeLimit(.minutes(1)))
struct RequestReportingTests {
    @Test func statesAreReportedInTheRequestersValueType() async throws {
        let parameter = ProcessingParameter(0, address: "/test/level", clock: ManualClock())
        let applicator = parameter.addApplicator { _ in }
        let request = try parameter.request(3, origin: nil) { "level \($0)" }
        #expect(request.address == "/test/level")
        #expect(request.value == "level 3")
        var names: [UpdateStateName] = []
        var values: [String] = []
        for await state in request.states {
            names.append(state.name)
            values.append(state.value)
        }
        #expect(names == [.applying, .applied])
        #expect(values == ["level 3", "level 3"])
        withExtendedLifetime(applicator) {}
    }

    @Test func theChangeCarriesTheRequestersOriginAndAddress() async throws {
        let parameter = ProcessingParameter(0, address: "/test/level", clock: ManualClock())
        var changes = parameter.changeUpdates().makeAsyncIterator()
        let origin = RequestOrigin("client")
        try await parameter.request(7, origin: origin).result()
        let change = await changes.next()
        #expect(change?.address == "/test/level")
        #expect(change?.value == 7)
        #expect(change?.origin == origin)
        try await parameter.request(8).result()
        #expect(await changes.next()?.origin == nil)
    }
}
