/// Whether the modules built like SoundFit's own (this one among them) are optimized: asked
/// here because the integration tests, which count heap calls on the JACK thread, are built
/// unoptimized themselves (their `_isDebugAssertConfiguration()` says true in every build), and
/// what they count is SoundFit's optimized code. Never inlined, so the answer is this module's.
@inline(never)
public func modulesAreOptimized() -> Bool {
    !_isDebugAssertConfiguration()
}
