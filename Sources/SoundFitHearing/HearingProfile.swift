import Foundation

/// A listener's hearing: an audiogram per ear. An ear without an audiogram gets the other
/// ear's (a common fitting default when only one ear was tested).
///
/// Its file format is described on `decode(_:file:)`.
public struct HearingProfile: Sendable, Equatable {
    public static let formatVersion = 1

    public var left: Audiogram?
    public var right: Audiogram?

    public init(left: Audiogram?, right: Audiogram?) throws(AudiogramError) {
        guard left != nil || right != nil else { throw .noEar }
        self.left = left
        self.right = right
    }

    /// The audiogram used for `ear`.
    public func audiogram(for ear: Ear) -> Audiogram {
        switch ear {
        case .left: (left ?? right)!
        case .right: (right ?? left)!
        }
    }
}
