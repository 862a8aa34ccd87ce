import SoundFitJSON

/// Why a patch operation was refused. The descriptions are what OSC `/error` and the CLI report.
public enum PatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name breaks a rule of `PatchName` (the message says which).
    case invalidName(String)
    /// No factory or user patch has this number.
    case unknownNumber(Int)
    /// No factory or user patch has this name (compared case-insensitively).
    case unknownName(String)
    /// Factory patches (number ≥ 0) cannot be deleted or overwritten.
    case factoryPatchIsReadOnly(number: Int, name: String)
    /// Saving a user patch under a factory patch's name.
    case nameBelongsToFactoryPatch(String)
    /// The parameter values to save are incomplete or invalid.
    case invalidParameters(DocumentError)
    /// The patch file could not be written or removed (the message names the file).
    case storage(String)
    /// A new user patch would pass `UserPatchLimits.maximumCount`.
    case tooManyUserPatches(name: String, limit: Int)
    /// The user patch files would pass `UserPatchLimits.maximumBytes` together.
    case userPatchesTooLarge(name: String, limit: Int)

    public var description: String {
        switch self {
        case .invalidName(let message): message
        case .unknownNumber(let number): "no patch has number \(number)"
        case .unknownName(let name): "no patch is named '\(NumberText.escapedForMessage(name))'"
        case .factoryPatchIsReadOnly(let number, let name):
            "patch \(number) '\(name)' is a factory patch: factory patches (number ≥ 0) are read-only"
        case .nameBelongsToFactoryPatch(let name):
            "'\(name)' is the name of a factory patch (read-only): save under another name"
        case .invalidParameters(let error): "cannot save the patch: \(error.description)"
        case .storage(let message): message
        case .tooManyUserPatches(let name, let limit):
            "cannot save patch '\(NumberText.escapedForMessage(name))': at most \(limit) user patches (--max-user-patches); delete some"
        case .userPatchesTooLarge(let name, let limit):
            "cannot save patch '\(NumberText.escapedForMessage(name))': user patches take at most \(limit) bytes together (--max-user-patch-bytes); delete some"
        }
    }
}
