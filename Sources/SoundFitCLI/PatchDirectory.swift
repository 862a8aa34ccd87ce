import Foundation
import Logging
import SoundFitRuntime
import SoundFitState

/// Finds the factory patches and opens the patch library.
enum PatchDirectory {
    /// The factory patch folder: `--patches-dir`, else `$SOUNDFIT_PATCHES`, else the `patches/`
    /// folder next to `Package.swift` above the executable (a checkout's `.build/…/soundfit`),
    /// else `/usr/share/soundfit/patches`.
    static func resolve(explicit: String?) -> URL? {
        ResourceDirectory.resolve(explicit: explicit, environmentVariable: "SOUNDFIT_PATCHES", folder: "patches")
    }

    /// Opens the library and logs every broken patch file (the others load).
    static func library(explicit: String?, stateDirectory: URL, logger: Logger) throws -> PatchLibrary {
        let userStore = UserPatchStore(stateDirectory: stateDirectory)
        let descriptors = StateKeeper.writableDescriptors
        guard let factory = resolve(explicit: explicit) else {
            logger.warning("no factory patches found (pass --patches-dir); only user patches are available")
            return PatchLibrary(factoryPatches: [], userStore: userStore, descriptors: descriptors)
        }
        if explicit != nil, !FileManager.default.fileExists(atPath: factory.path) {
            throw CLIError("--patches-dir \(factory.path) does not exist")
        }
        let library = PatchLibrary(factoryDirectory: factory, userStore: userStore, descriptors: descriptors)
        for problem in library.problems { logger.error("patch not loaded: \(problem)") }
        logger.info("patches: \(library.factoryPatches.count) factory from \(factory.path), \(library.userPatches.count) user")
        return library
    }
}
