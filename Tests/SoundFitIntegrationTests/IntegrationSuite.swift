import Testing
import SoundFitTestSupport

/// End-to-end tests: a real `jackd` (dummy backend) per test, the real `soundfit` binary,
/// real UDP OSC from an independent client, and a Swift JACK client that plays and records.
///
/// Everything runs one test at a time: each test owns a jackd, and on a small machine parallel
/// audio graphs would measure the scheduler instead of SoundFit. Each test has 15 minutes (the
/// longest, the standard audiograms through JACK, takes about 4 on this 2-core machine): a
/// test that hangs fails instead of holding up the run.
@Suite(.serialized, .timeLimit(.minutes(15))) struct SoundFitIntegration {
    /// Whether the heap-call counts run (`optimizedCodeOnly`): when SoundFit's modules are
    /// optimized. The question goes to a module built like them: this one is unoptimized in
    /// every build.
    static let countsHeapCalls = modulesAreOptimized()
}

/// Checks that `reports` (the `/state` messages for one change, in order) end in `applied`
/// with `value`, after `applying` when the value changed. A set to the value already in effect
/// may go straight to `applied` (nothing to apply); pass `changed: false` for those.
func expectApplied(_ reports: [OSCTestMessage], _ address: String, _ value: OSCValue, changed: Bool = true,
                   sourceLocation: SourceLocation = #_sourceLocation) {
    let states = reports.compactMap { $0.string(1) }
    #expect(states.last == "applied", "\(address): \(reports)", sourceLocation: sourceLocation)
    #expect(states.dropLast().allSatisfy { $0 == "applying" }, "\(address): \(reports)", sourceLocation: sourceLocation)
    if changed {
        #expect(states.first == "applying", "\(address): \(reports)", sourceLocation: sourceLocation)
    }
    for report in reports {
        #expect(report.string(0) == address, sourceLocation: sourceLocation)
        #expect(report.arguments.count >= 3 && report.arguments[2] == value,
                "\(address): reported value \(report) instead of \(value)", sourceLocation: sourceLocation)
    }
}

/// A measured number, printed so a run's log shows what was measured.
func report(_ label: String, _ value: Double, unit: String = "dB") {
    print("measured: \(label) = \(String(format: "%.4f", value)) \(unit)")
}

extension Trait where Self == ConditionTrait {
    /// Runs a heap-call count only on optimized code. An unoptimized build allocates where the
    /// optimizer specializes generics and removes temporaries (6 heap calls per run were counted
    /// on the JACK thread of a debug build), so counting there measures the debug build, not
    /// what a user runs. `scripts/test.sh` builds the tests in the release configuration.
    static var optimizedCodeOnly: Self {
        .enabled(
            if: SoundFitIntegration.countsHeapCalls,
            "counts heap calls of optimized code only: run scripts/test.sh, or swift build -c release --build-tests -Xswiftc -enable-testing and swift test -c release")
    }
}
