import SoundFitEngine
import Testing

@Suite struct MIDIControlInputTests {
    @Test func mappedControlChangesReachTheControlSideWithTheirParameterAndValue() {
        let input = MIDIControlInput()
        input.setTable([(channel: 1, controller: 7, parameterIndex: 14), (channel: 16, controller: 127, parameterIndex: 3)])
        input.realtime.receive(status: 0xB0, data1: 7, data2: 100)      // channel 1, CC 7
        input.realtime.receive(status: 0xBF, data1: 127, data2: 0)      // channel 16, CC 127
        input.realtime.receive(status: 0xB1, data1: 7, data2: 5)        // channel 2: unmapped
        input.realtime.receive(status: 0x90, data1: 60, data2: 100)     // a note: ignored
        input.realtime.receive(status: 0xC4, data1: 3, data2: 0)        // program change 3 on channel 5
        #expect(input.takeEvents() == [.mapped(parameterIndex: 14, value: 100), .mapped(parameterIndex: 3, value: 0),
                                       .programChange(channel: 5, program: 3)])
        #expect(input.takeEvents().isEmpty)
        // Unmapped once the table says so.
        input.setTable([])
        input.realtime.receive(status: 0xB0, data1: 7, data2: 1)
        #expect(input.takeEvents().isEmpty)
    }

    @Test func learnTakesTheFirstControlChangeOnce() {
        let input = MIDIControlInput()
        input.setTable([(channel: 1, controller: 7, parameterIndex: 14)])
        input.armLearn()
        input.realtime.receive(status: 0xB2, data1: 20, data2: 1)
        input.realtime.receive(status: 0xB0, data1: 7, data2: 2)
        #expect(input.takeEvents() == [.learn(channel: 3, controller: 20), .mapped(parameterIndex: 14, value: 2)])
        input.armLearn()
        input.disarmLearn()
        input.realtime.receive(status: 0xB2, data1: 20, data2: 1)
        #expect(input.takeEvents().isEmpty)
    }

    @Test func aFullRingDropsAndCountsInsteadOfOverwriting() {
        let input = MIDIControlInput()
        let extra = 10
        for index in 0..<(RealtimeMIDIControl.ringCapacity + extra) {
            input.realtime.receive(status: 0xC0, data1: UInt8(index % 128), data2: 0)
        }
        let events = input.takeEvents()
        #expect(events.count == RealtimeMIDIControl.ringCapacity)
        #expect(events.first == .programChange(channel: 1, program: 0))
        #expect(input.droppedEvents == UInt64(extra))
        input.realtime.receive(status: 0xC0, data1: 9, data2: 0)
        #expect(input.takeEvents() == [.programChange(channel: 1, program: 9)])
    }

    /// The drain sleeps while nothing feeds the port: `waitForSource` parks until a connection
    /// is reported, returns at once while one is, and returns when its task is cancelled.
    @Test func waitingForASourceEndsOnAConnectionOrACancellation() async throws {
        let input = MIDIControlInput()
        #expect(!input.isSourceConnected)
        let waiting = Task { await input.waitForSource(); return ContinuousClock.now }
        try await Task.sleep(for: .milliseconds(50))
        let connectedAt = ContinuousClock.now
        input.setSourceConnected(true)
        #expect(await waiting.value >= connectedAt, "the wait ended before the connection")
        await input.waitForSource()                       // connected: returns at once

        input.setSourceConnected(false)
        let cancelled = Task { await input.waitForSource(); return Task.isCancelled }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value, "the wait ended only through its cancellation")
        #expect(!input.isSourceConnected)
    }
}
