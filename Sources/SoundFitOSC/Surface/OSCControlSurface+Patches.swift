import Foundation
import SoundFitHearing
import SoundFitRuntime
import SoundFitState

/// Hearing profile and patch commands.
extension OSCControlSurface {
    /// `/profile/audiogram ,s left|right|both ,f hz ,f db_hl …` → `/profile/presets ,s variant …`.
    /// The new audiogram replaces that ear's (both: both ears'); the other ear keeps its own.
    func profileAudiogram(_ message: OSCMessage, _ peer: OSCPeer) {
        let arguments = message.arguments
        guard let first = arguments.first, case .string(let ear) = first, ["left", "right", "both"].contains(ear) else {
            reject(message.address, "expects ,s left|right|both then hz, dB HL pairs", to: peer)
            return
        }
        let numbers = arguments.dropFirst().map(Self.number)
        guard !numbers.isEmpty, numbers.count % 2 == 0, numbers.allSatisfy({ $0 != nil }) else {
            reject(message.address, "expects pairs of numbers (hz, dB HL) after the ear, got \(message.typeTags)", to: peer)
            return
        }
        let values = numbers.map { $0! }
        let profile: HearingProfile
        do {
            let audiogram = try Audiogram(stride(from: 0, to: values.count, by: 2).map { (values[$0], values[$0 + 1]) })
            let current = runtime.presets.profile
            profile = try HearingProfile(left: ear == "right" ? current?.left : audiogram,
                                         right: ear == "left" ? current?.right : audiogram)
        } catch {
            reject(message.address, error.description, to: peer)
            return
        }
        Task { [self] in
            do {
                let variants = try await runtime.submitProfile(profile)
                stateKeeper?.persist()
                send(OSCMessage("/profile/presets", variants.map { .string($0.rawValue) }), to: peer)
            } catch {
                reject(message.address, "\(error)", to: peer)
            }
        }
    }

    /// `/patch/list` → `/patch/item ,i number ,s name` each, then `/patch/end ,i count`.
    func patchList(_ message: OSCMessage, _ peer: OSCPeer) {
        guard let keeper = requireKeeper(message, peer) else { return }
        let patches = keeper.library.patches
        for patch in patches {
            send(OSCMessage("/patch/item", [.int32(Int32(patch.number)), .string(patch.name)]), to: peer)
        }
        send(OSCMessage("/patch/end", [.int32(Int32(patches.count))]), to: peer)
    }

    /// `/patch/load ,i number | ,s name` → `/patch/current ,i number ,s name` (to subscribers too).
    func patchLoad(_ message: OSCMessage, _ peer: OSCPeer) {
        guard let keeper = requireKeeper(message, peer), let reference = patchReference(message, peer) else { return }
        Task { [self] in
            do {
                _ = try await keeper.loadPatch(reference)
                send(currentPatchMessage(keeper.currentPatch), to: peer)
            } catch {
                reject(message.address, "\(error)", to: peer)
            }
        }
    }

    /// `/patch/save ,s name` → `/patch/saved ,i number ,s name`.
    func patchSave(_ message: OSCMessage, _ peer: OSCPeer) {
        guard let keeper = requireKeeper(message, peer) else { return }
        guard message.arguments.count == 1, case .string(let name) = message.arguments[0] else {
            reject(message.address, "expects ,s name", to: peer)
            return
        }
        do {
            let patch = try keeper.savePatch(name: name)
            send(OSCMessage("/patch/saved", [.int32(Int32(patch.number)), .string(patch.name)]), to: peer)
        } catch {
            reject(message.address, "\(error)", to: peer)
        }
    }

    /// `/patch/delete ,i number` → `/patch/deleted ,i number`.
    func patchDelete(_ message: OSCMessage, _ peer: OSCPeer) {
        guard let keeper = requireKeeper(message, peer), let reference = patchReference(message, peer) else { return }
        do {
            let patch = try keeper.deletePatch(reference)
            send(OSCMessage("/patch/deleted", [.int32(Int32(patch.number))]), to: peer)
        } catch {
            reject(message.address, "\(error)", to: peer)
        }
    }

    /// `/patch/current` → `/patch/current ,i number ,s name ,i modified`.
    func patchCurrent(_ message: OSCMessage, _ peer: OSCPeer) {
        guard let keeper = requireKeeper(message, peer) else { return }
        guard message.arguments.isEmpty else {
            reject(message.address, "/patch/current takes no arguments", to: peer)
            return
        }
        guard keeper.currentPatch != nil else {
            reject(message.address, "no patch has been loaded or saved yet", to: peer)
            return
        }
        send(currentPatchMessage(keeper.currentPatch), to: peer)
    }

    /// `/patch/current ,i number ,s name ,i modified` (`,i -2147483648 ,s "" ,i 0` for none).
    func currentPatchMessage(_ current: CurrentPatch?) -> OSCMessage {
        guard let current else { return OSCMessage("/patch/current", [.int32(Int32.min), .string(""), .int32(0)]) }
        return OSCMessage("/patch/current", [.int32(Int32(current.number)), .string(current.name),
                                             .int32(current.isModified ? 1 : 0)])
    }

    /// Tells subscribers about a new current patch (or a change of its modified flag).
    public func currentPatchChanged(_ current: CurrentPatch?) {
        enqueueForSubscribers { $0.enqueueNotification(currentPatchMessage(current), origin: nil) }
    }

    private func patchReference(_ message: OSCMessage, _ peer: OSCPeer) -> PatchReference? {
        guard message.arguments.count == 1 else {
            reject(message.address, "expects ,i number or ,s name", to: peer)
            return nil
        }
        switch message.arguments[0] {
        case .string(let name), .symbol(let name): return .name(name)
        case let argument:
            guard let number = Self.integer(argument) else {
                reject(message.address, "expects ,i number or ,s name", to: peer)
                return nil
            }
            return .number(number)
        }
    }

    private func requireKeeper(_ message: OSCMessage, _ peer: OSCPeer) -> StateKeeper? {
        guard let keeper = stateKeeper else {
            reject(message.address, "patches are not available (no state directory)", to: peer)
            return nil
        }
        return keeper
    }
}
