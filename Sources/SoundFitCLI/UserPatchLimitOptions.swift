import ArgumentParser
import SoundFitState

/// `soundfit run`'s bounds on the user patches of its state directory (`UserPatchLimits`):
/// one client saving in a loop cannot fill the disk, the memory or the start time.
struct UserPatchLimitOptions: ParsableArguments {
    static let countRange = 1...100_000
    static let bytesRange = 4096...(1 << 30)

    @Option(help: "User patches the state directory holds at most (1…100000); /patch/save of a new name is refused beyond.")
    var maxUserPatches = UserPatchLimits.defaultMaximumCount

    @Option(help: "Bytes the user patch files take at most together (4096…1073741824; default 16 MiB); /patch/save is refused beyond.")
    var maxUserPatchBytes = UserPatchLimits.defaultMaximumBytes

    var limits: UserPatchLimits { UserPatchLimits(maximumCount: maxUserPatches, maximumBytes: maxUserPatchBytes) }

    func validate() throws {
        guard Self.countRange.contains(maxUserPatches) else {
            throw ValidationError("--max-user-patches must be 1…100000, got \(maxUserPatches)")
        }
        guard Self.bytesRange.contains(maxUserPatchBytes) else {
            throw ValidationError("--max-user-patch-bytes must be 4096…1073741824, got \(maxUserPatchBytes)")
        }
    }
}
