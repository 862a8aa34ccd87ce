/// How many user patches one state directory holds at most, and how many bytes their files
/// take together: a client saving in a loop must not fill the disk, the memory (every patch is
/// loaded at start and listed by `/patch/list`) or the start time. Over either bound a save of
/// a new name is refused; overwriting an existing name still works when it does not grow the
/// total past the byte bound.
///
/// Thread rules: a value; read under the library's lock.
public struct UserPatchLimits: Sendable, Equatable {
    /// `--max-user-patches`' default.
    public static let defaultMaximumCount = 1000
    /// `--max-user-patch-bytes`' default: 16 MiB.
    public static let defaultMaximumBytes = 16 * 1024 * 1024

    /// User patch files at most (broken ones count: they are on the disk too).
    public var maximumCount: Int
    /// Bytes of user patch files at most, together.
    public var maximumBytes: Int

    public init(maximumCount: Int = defaultMaximumCount, maximumBytes: Int = defaultMaximumBytes) {
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }
}
