/// A value that moves to its target in a straight line over a fixed number of steps, then stops.
///
/// A step is one sample for the per-sample smoothers (mix, gain, bypass fades) and one
/// coefficient segment for the filter's control-rate smoothers. A new target restarts the ramp
/// from wherever the value is, so bursts of updates stay continuous. After the last step the value
/// is exactly the target, which lets a kernel detect "steady" with `isRamping` and skip work.
///
/// Real-time safe: every method may be called on the audio thread.
public struct LinearRamp: Sendable, Equatable {
    /// The current value.
    public private(set) var value: Double
    /// Where the ramp ends.
    public private(set) var target: Double
    /// Steps left until `value == target`.
    public private(set) var remainingSteps: Int
    private var increment: Double

    public init(value: Double) {
        self.value = value
        self.target = value
        self.remainingSteps = 0
        self.increment = 0
    }

    /// True while the value still moves.
    @inline(__always) public var isRamping: Bool { remainingSteps > 0 }

    /// Jumps to `newValue` and stops.
    @inline(__always)
    public mutating func snap(to newValue: Double) {
        value = newValue
        target = newValue
        remainingSteps = 0
        increment = 0
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
        remainingSteps = steps
        increment = (newTarget - value) / Double(steps)
    }

    /// Advances one step and returns the new value.
    @inline(__always) @discardableResult
    public mutating func step() -> Double {
        guard remainingSteps > 0 else { return value }
        remainingSteps &-= 1
        value = remainingSteps == 0 ? target : value + increment
        return value
    }

    /// Writes the values after each of the next `count` steps into `output` and advances.
    /// The sample at which the ramp ends holds exactly the target.
    @inline(__always)
    public mutating func fill(_ output: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        if remainingSteps > 0 {
            let n = min(remainingSteps, count)
            let start = value
            let increment = self.increment
            while i < n {
                output[i] = Float(start + increment * Double(i &+ 1))
                i &+= 1
            }
            remainingSteps &-= n
            if remainingSteps == 0 {
                value = target
                output[n &- 1] = Float(target)
            } else {
                value = start + increment * Double(n)
            }
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
        guard remainingSteps > 0, count > 0 else { return }
        if count >= remainingSteps {
            snapToTarget()
        } else {
            remainingSteps &-= count
            value += increment * Double(count)
        }
    }

    /// Number of steps for a ramp of `seconds` when one step lasts `stepSeconds` (at least 1).
    @inline(__always)
    public static func steps(forSeconds seconds: Double, stepSeconds: Double) -> Int {
        let n = seconds / stepSeconds + 0.5  // rounded by the truncating conversion below
        return n.isFinite && n >= 1 ? Int(min(n, 1e9)) : 1
    }
}
