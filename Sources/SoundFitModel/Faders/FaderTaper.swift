import Foundation

/// How a parameter maps onto a 0…1 fader position, so TouchOSC and Open Stage Control faders
/// (which send 0…1 by default) can drive every parameter.
///
/// Each parameter entry holds its taper; the usual one follows the kind and unit
/// (`init(kind:unit:)`):
/// - frequencies (unit `Hz`, positive range): logarithmic, equal travel per octave
///   (`/filter/cutoff` 0.5 = √(20·20000) ≈ 632.5 Hz);
/// - gains (unit `dB`): linear in dB;
/// - other floats: linear;
/// - ints: linear, rounded to the nearest integer;
/// - bools: 0 / 1, a position ≥ 0.5 is on;
/// - choices: index / (count − 1), a position selects the nearest index (halfway rounds up).
///
/// A position outside 0…1 or not finite is rejected, never clamped, like any other value.
/// Surfaces give it their own form (OSC: `<address>/normalized`).
///
/// A pure value type: usable from any thread except the JACK process callback (it allocates
/// for choices and error messages).
public enum FaderTaper: Sendable, Equatable {
    /// Frequencies: `lower · (upper / lower)^position`.
    case logarithmic(ClosedRange<Float>)
    /// Gains in dB: linear in the native (dB) value.
    case decibel(ClosedRange<Float>)
    /// Other floats.
    case linear(ClosedRange<Float>)
    /// Integers: linear, rounded.
    case integer(ClosedRange<Int>)
    /// Booleans.
    case toggle
    /// Choices, evenly spaced in declaration order.
    case steps([String])

    /// The taper of a parameter entry.
    public init(_ descriptor: ParameterDescriptor) {
        self = descriptor.taper
    }

    /// The usual taper for a value of `kind` in `unit`.
    public init(kind: ParameterKind, unit: String) {
        switch kind {
        case .bool:
            self = .toggle
        case .int(let range):
            self = .integer(range)
        case .choice(let names):
            self = .steps(names)
        case .float(let range):
            switch unit.lowercased() {
            case "hz" where range.lowerBound > 0: self = .logarithmic(range)
            case "db": self = .decibel(range)
            default: self = .linear(range)
            }
        }
    }

    /// The fader position (0…1) of a native value.
    ///
    /// `value` is expected to be a validated value of the taper's kind (what the engine
    /// reports); a value of another kind, or a choice the taper does not know, maps to 0, and a
    /// value outside the range maps to the nearest end.
    public func normalized(_ value: ParameterValue) -> Float {
        let position: Double
        switch (self, value) {
        case (.logarithmic(let range), .float(let v)):
            let lower = Double(range.lowerBound), upper = Double(range.upperBound)
            position = Foundation.log(Double(v) / lower) / Foundation.log(upper / lower)
        case (.decibel(let range), .float(let v)), (.linear(let range), .float(let v)):
            position = Self.fraction(Double(v), Double(range.lowerBound), Double(range.upperBound))
        case (.integer(let range), .int(let v)):
            position = Self.fraction(Double(v), Double(range.lowerBound), Double(range.upperBound))
        case (.toggle, .bool(let on)):
            position = on ? 1 : 0
        case (.steps(let names), .choice(let name)):
            guard names.count > 1, let index = names.firstIndex(of: name) else { return 0 }
            position = Double(index) / Double(names.count - 1)
        default:
            return 0
        }
        guard position.isFinite else { return 0 }  // empty range, or a non-positive frequency
        return Float(min(max(position, 0), 1))
    }

    /// The native value at a fader position. Positions outside 0…1 and non-finite ones throw;
    /// `address` names the request in the error (the `/normalized` address the client sent).
    /// The ends map exactly onto the range's bounds.
    public func value(normalized position: Float, address: String) throws(ParameterError) -> ParameterValue {
        guard position.isFinite else { throw .notFinite(address: address) }
        guard position >= 0 && position <= 1 else {
            throw .outOfRange(address: address, value: "\(position)", range: "0…1")
        }
        let p = Double(position)
        switch self {
        case .logarithmic(let range):
            return .float(Self.interpolate(range, p) { lower, upper in lower * Foundation.pow(upper / lower, p) })
        case .decibel(let range), .linear(let range):
            return .float(Self.interpolate(range, p) { lower, upper in lower + p * (upper - lower) })
        case .integer(let range):
            let lower = Double(range.lowerBound), upper = Double(range.upperBound)
            let exact = min(max((lower + p * (upper - lower)).rounded(.toNearestOrAwayFromZero), lower), upper)
            return .int(Int(exact))
        case .toggle:
            return .bool(position >= 0.5)
        case .steps(let names):
            guard !names.isEmpty else { throw .unknownChoice(address: address, value: "\(position)", choices: []) }
            let index = Int((p * Double(names.count - 1)).rounded(.toNearestOrAwayFromZero))
            return .choice(names[index])
        }
    }

    /// A short description for the documentation ("logarithmic", "linear in dB", …).
    public var summary: String {
        switch self {
        case .logarithmic: "logarithmic"
        case .decibel: "linear in dB"
        case .linear: "linear"
        case .integer: "linear, rounded"
        case .toggle: "0 / 1 (≥ 0.5 = on)"
        case .steps: "index / (count − 1), nearest"
        }
    }

    /// `lower + position · (upper − lower)` or another curve, computed in Double; the ends are
    /// exact and rounding can never step outside the range (validation would reject it).
    private static func interpolate(_ range: ClosedRange<Float>, _ position: Double,
                                    _ curve: (Double, Double) -> Double) -> Float {
        if position == 0 { return range.lowerBound }
        if position == 1 { return range.upperBound }
        let value = Float(curve(Double(range.lowerBound), Double(range.upperBound)))
        return min(max(value, range.lowerBound), range.upperBound)
    }

    private static func fraction(_ value: Double, _ lower: Double, _ upper: Double) -> Double {
        (value - lower) / (upper - lower)
    }
}
