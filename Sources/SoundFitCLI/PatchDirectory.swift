import Foundation
import Logging
import SoundFitRuntime
import SoundFitState

/// Finds the factory patches and opens the patch library.
enum PatchDirectory {
    /// The factory patch folder: `--patches-dir`, else `$SOUNDFIT_PATCHES`, else the `patches`
    /// folder of the checkout or the installation (`ResourceDirectory`).
    static func resolve(explicit: String?) -> URL? {
        ResourceDirectory.resolve(explicit: explicit, environmentVariable: "SOUNDFIT_PATCHES", folder: "patches")
    }

    /// Opens the library and logs every broken patch file (the others load), and user patches
    /// already past `limits` (they all load; only new ones are refused).
    static func library(explicit: String?, stateDirectory: URL, logger: Logger,
                        limits: UserPatchLimits = UserPatchLimits()) throws -> PatchLibrary {
        let userStore = UserPatchStore(stateDirectory: stateDirectory)
        let descriptors = StateKeeper.writableDescriptors
        guard let factory = resolve(explicit: explicit) else {
            logger.warning("no factory patches found (pass --patches-dir); only user patches are available")
            return PatchLibrary(factoryPatches: [], userStore: userStore, descriptors: descriptors, limits: limits)
        }
        if explicit != nil, !FileManager.default.fileExists(atPath: factory.path) {
            throw CLIError("--patches-dir \(factory.path) does not exist")
        }
        let library = PatchLibrary(factoryDirectory: factory, userStore: userStore, descriptors: descriptors, limits: limits)
        for problem in library.problems { logger.error("patch not loaded: \(problem)") }
        let storage = library.userStorage
        if storage.count > limits.maximumCount || storage.bytes > limits.maximumBytes {
            logger.warning("""
                \(storage.count) user patches take \(storage.bytes) bytes in \(userStore.directory.path), past the bounds \
                (\(limits.maximumCount) patches, \(limits.maximumBytes) bytes: --max-user-patches, --max-user-patch-bytes): \
                new patches are refused until some are deleted
                """)
        }
        logger.info("patches: \(library.factoryPatches.count) factory from \(factory.path), \(library.userPatches.count) user")
        return library
    }
}
