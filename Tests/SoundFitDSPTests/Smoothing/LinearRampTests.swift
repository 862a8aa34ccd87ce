import SoundFitDSP
import Testing

@Suite("LinearRamp")
struct LinearRampTests {
    @Test("reaches the target exactly after the given steps, linearly")
    func reachesTarget() {
        var ramp = LinearRamp(value: 1)
        ramp.setTarget(4, steps: 3)
        #expect(ramp.isRamping)
        #expect(ramp.step() == 2)
        #expect(ramp.step() == 3)
        #expect(ramp.step() == 4)
        #expect(!ramp.isRamping)
        #expect(ramp.step() == 4)
    }

    @Test("fill equals stepping, whatever the split")
    func fillMatchesSteps() {
        var stepped = LinearRamp(value: 0.25)
        stepped.setTarget(-0.7, steps: 1000)
        let expected = (0..<1500).map { _ in Float(stepped.step()) }
        for split in [[1500], [1, 2, 3, 997, 497], [999, 1, 500]] {
            var ramp = LinearRamp(value: 0.25)
            ramp.setTarget(-0.7, steps: 1000)
            var out = [Float](repeating: 0, count: 1500)
            var offset = 0
            out.withUnsafeMutableBufferPointer { buffer in
                for n in split {
                    ramp.fill(buffer.baseAddress! + offset, count: n)
                    offset += n
                }
            }
            #expect(out == expected)
            #expect(out[999] == Float(-0.7))
        }
    }

    @Test("a new target mid-ramp continues from the current value")
    func retargetIsContinuous() {
        var ramp = LinearRamp(value: 0)
        ramp.setTarget(1, steps: 10)
        for _ in 0..<5 { ramp.step() }
        #expect(ramp.value == 0.5)
        ramp.setTarget(0, steps: 5)
        #expect(ramp.value == 0.5)
        #expect(ramp.step() == 0.4)
        ramp.skip(100)
        #expect(ramp.value == 0 && !ramp.isRamping)
    }

    @Test("step counts round to the nearest step, at least one")
    func stepCounts() {
        #expect(LinearRamp.steps(forSeconds: 0.02, stepSeconds: 1 / 48000.0) == 960)
        #expect(LinearRamp.steps(forSeconds: 0.01, stepSeconds: 16 / 44100.0) == 28)
        #expect(LinearRamp.steps(forSeconds: 0, stepSeconds: 1) == 1)
    }
}
