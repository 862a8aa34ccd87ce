import SoundFit
import Testing

/// The pure parts of `ZeroconfAdvertiser`: its host name and its reading of `avahi-publish`'s
/// lines. Discovery itself is tested against a real avahi-daemon
/// (`SoundFitIntegration.ZeroconfDiscovery`).
@Suite struct ZeroconfTests {
    @Test func hostLabelsAreDNSLabelsUniquePerNameAndMachine() {
        #expect(ZeroconfAdvertiser.hostLabel(name: "fit-a", machine: "studio") == "soundfit-fit-a-studio")
        #expect(ZeroconfAdvertiser.hostLabel(name: "soundfit", machine: "studio.example.org") == "soundfit-studio")
        #expect(ZeroconfAdvertiser.hostLabel(name: "SoundFit Left_Ear", machine: "Vm") == "soundfit-left-ear-vm")
        #expect(ZeroconfAdvertiser.hostLabel(name: "Fit A (2)", machine: "") == "soundfit-fit-a-2")
        #expect(ZeroconfAdvertiser.hostLabel(name: "--é/ü--", machine: "box") == "soundfit-box")
        #expect(ZeroconfAdvertiser.hostLabel(name: "fit-a", machine: "studio")
            != ZeroconfAdvertiser.hostLabel(name: "fit-b", machine: "studio"))
        let long = ZeroconfAdvertiser.hostLabel(name: String(repeating: "x", count: 59) + "-abc", machine: "studio")
        #expect(long.utf8.count <= 63 && !long.hasSuffix("-"), "\(long)")
        #expect(long == "soundfit-" + String(repeating: "x", count: 54))
    }

    @Test func aTakenHostNameGetsTheNextNumber() {
        #expect(ZeroconfAdvertiser.alternative(to: "soundfit-fit-a-vm.local") == "soundfit-fit-a-vm-2.local")
        #expect(ZeroconfAdvertiser.alternative(to: "soundfit-fit-a-vm-2.local") == "soundfit-fit-a-vm-3.local")
        #expect(ZeroconfAdvertiser.alternative(to: "soundfit-fit-1.local") == "soundfit-fit-1-2.local")
        let long = ZeroconfAdvertiser.alternative(to: String(repeating: "x", count: 63) + ".local")
        #expect(long == String(repeating: "x", count: 61) + "-2.local")
    }

    @Test func avahiPublishLinesBecomeEvents() {
        #expect(AvahiPublishLine("Established under name 'SoundFit fit-a'") == .established(name: "SoundFit fit-a"))
        #expect(AvahiPublishLine("Established under name 'it's'") == .established(name: "it's"))
        #expect(AvahiPublishLine("Name collision, picking new name 'SoundFit fit-a #2'.") == .collision(newName: "SoundFit fit-a #2"))
        #expect(AvahiPublishLine("Waiting for daemon ...") == .daemonAbsent)
        #expect(AvahiPublishLine("Disconnected, reconnecting ...") == .daemonAbsent)
        #expect(AvahiPublishLine("Server version: avahi 0.8; Host name: vm.local") == .server(hostName: "vm.local"))
        #expect(AvahiPublishLine("Failed to create client object: Daemon not running")
            == .failed(reason: "Failed to create client object: Daemon not running"))
        #expect(AvahiPublishLine("Client failure, exiting: Daemon connection failed")
            == .failed(reason: "Client failure, exiting: Daemon connection failed"))
        for quiet in ["", "Host name conflict", "Established under name", "something else"] {
            #expect(AvahiPublishLine(quiet) == nil, "\(quiet)")
        }
    }
}
