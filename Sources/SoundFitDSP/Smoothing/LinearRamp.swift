/// A value that moves to its target in a straight line over a fixed number of steps, then stops.
///
/// A step is one sample for the per-sample smoothers (mix, gain, bypass fades) and one
/// coefficient segment for the filter's control-rate smoothers. A new target restarts the ramp
/// from wherever the value is, so bursts of updates stay continuous. The value after `k` steps is
/// computed as `origin + k·increment` (no accumulated rounding), so the result does not depend on
/// how the steps are split into calls, and after the last step it is exactly the target, which
/// lets a kernel detect "steady" with `isRamping` and skip work.
///
/// Real-time safe: every method may be called on the audio thread.
public struct LinearRamp: Sendable, Equatable {
    /// The current value.
    public private(set) var value: Double
    /// Where the ramp ends.
    public private(set) var target: Double
    private var origin: Double
    private var increment: Double
    private var totalSteps: Int
    private var stepsTaken: Int

    public init(value: Double) {
        self.value = value
        target = value
        origin = value
        increment = 0
        totalSteps = 0
        stepsTaken = 0
    }

    /// Steps left until `value == target`.
    @inline(__always) public var remainingSteps: Int { totalSteps &- stepsTaken }

    /// True while the value still moves.
    @inline(__always) public var isRamping: Bool { stepsTaken < totalSteps }

    /// Jumps to `newValue` and stops.
    @inline(__always)
    public mutating func snap(to newValue: Double) {
        value = newValue
        target = newValue
        origin = newValue
        increment = 0
        totalSteps = 0
        stepsTaken = 0
    }

    /// Jumps to the current target and stops.
    @inline(__always)
    public mutating func snapToTarget() { snap(to: target) }

    /// Starts a ramp from the current value to `newTarget` over `steps` steps (snaps if `steps <= 0`).
    @inline(__always)
    public mutating func setTarget(_ newTarget: Double, steps: Int) {
        guard steps > 0, newTarget != value else {
            snap(to: newTarget)
            return
        }
        target = newTarget
        origin = value
        increment = (newTarget - value) / Double(steps)
        totalSteps = steps
        stepsTaken = 0
    }

    /// The value after `k` steps of the current ramp.
    @inline(__always)
    private func valueAfter(_ k: Int) -> Double {
        k >= totalSteps ? target : origin + increment * Double(k)
    }

    /// Advances one step and returns the new value.
    @inline(__always) @discardableResult
    public mutating func step() -> Double {
        guard isRamping else { return value }
        stepsTaken &+= 1
        value = valueAfter(stepsTaken)
        return value
    }

    /// Writes the values after each of the next `count` steps into `output` and advances.
    /// The sample at which the ramp ends holds exactly the target.
    @inline(__always)
    public mutating func fill(_ output: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        if isRamping {
            let n = min(remainingSteps, count)
            let taken = stepsTaken
            let origin = self.origin, increment = self.increment
            while i < n {
                output[i] = Float(origin + increment * Double(taken &+ i &+ 1))
                i &+= 1
            }
            stepsTaken &+= n
            value = valueAfter(stepsTaken)
            if !isRamping { output[n &- 1] = Float(target) }
        }
        let steady = Float(value)
        while i < count {
            output[i] = steady
            i &+= 1
        }
    }

    /// Advances `count` steps without producing values.
    @inline(__always)
    public mutating func skip(_ count: Int) {
        guard isRamping, count > 0 else { return }
        stepsTaken = min(totalSteps, stepsTaken &+ count)
        value = valueAfter(stepsTaken)
    }

    /// Number of steps for a ramp of `seconds` when one step lasts `stepSeconds` (at least 1).
    @inline(__always)
    public static func steps(forSeconds seconds: Double, stepSeconds: Double) -> Int {
        let n = seconds / stepSeconds + 0.5  // rounded by the truncating conversion below
        return n.isFinite && n >= 1 ? Int(min(n, 1e9)) : 1
    }
}
