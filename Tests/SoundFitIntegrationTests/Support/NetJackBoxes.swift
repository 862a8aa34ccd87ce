import Foundation
import Glibc
import Synchronization

/// "Machines" for netjack2 tests without root: network namespaces in one user namespace of
/// the test's own user (`unshare --user --map-current-user --keep-caps`), joined by a bridge.
///
/// - The master box (10.77.0.1, the bridge's address) has its own network but shares the
///   test's mounts: its jackd is in the test's /dev/shm, so the test's JACK client joins it.
/// - Each slave box (10.77.0.2, .3, …) has its own network and mounts, with a private tmpfs
///   on /dev/shm (JACK's registry and sockets): its jackd and clients see no other server.
///
/// Nothing leaves the namespaces: the bridge has no way out. `wrapper(for:)` is the command
/// prefix that runs a program in a box (`nsenter`); `socket(_:in:)` makes a socket in a box
/// for the test to use (a socket keeps the network namespace it was made in).
/// Children die with the test: the holder has a parent-death SIGKILL, and the boxes die with it.
final class NetJackBoxes: @unchecked Sendable {
    struct Box: Sendable {
        /// 0 for the master, 1… for the slaves.
        let index: Int
        /// A process inside the box's namespaces (`nsenter --target`).
        let pid: pid_t
        /// The box's IPv4 address, dotted.
        let address: String
        /// The address in host byte order, as `OSCTestClient` and `PlainHTTP` take it.
        var hostOrderAddress: UInt32 {
            address.split(separator: ".").reduce(UInt32(0)) { $0 << 8 | UInt32($1)! }
        }
    }

    let master: Box
    let slaves: [Box]
    private let holder: ChildProcess
    /// Per box index: the socket maker and the test's end of its socket pair.
    private let factories = Mutex<[Int: (process: ChildProcess, end: Int32)]>([:])
    private var stopped = false

    /// The holder: bridge and master box in the namespaces `unshare` made, one `unshare --net
    /// --mount` per slave box (a veth into it, the address set from inside), then it waits.
    /// Ambient capabilities (`--keep-caps`) let it configure the boxes as a plain user.
    private static let script = #"""
        set -eu
        slaves=$1
        ip link set lo up
        ip link add nj-br type bridge
        ip addr add 10.77.0.1/24 dev nj-br
        ip link set nj-br up
        for i in $(seq 1 "$slaves"); do
          address=10.77.0.$((i + 1))
          exec {box}< <(exec setpriv --pdeathsig KILL -- unshare --net --mount --fork --kill-child bash -c '
            set -eu
            mount -t tmpfs -o mode=1777 tmpfs /dev/shm
            ip link set lo up
            echo $$
            while ! ip link show nj0 >/dev/null 2>&1; do sleep 0.02; done
            ip addr add '"$address"'/24 dev nj0
            ip link set nj0 up
            echo up
            exec sleep infinity')
          read -r pid <&$box
          ip link add nj-s$i type veth peer name nj0 netns "$pid"
          ip link set nj-s$i master nj-br
          ip link set nj-s$i up
          read -r state <&$box
          echo "box $i $pid $address $state"
        done
        echo "box 0 $$ 10.77.0.1 up"
        echo ready
        exec sleep infinity
        """#

    /// Makes the boxes and waits until every slave box's address is up.
    init(slaves count: Int) throws {
        holder = try ChildProcess(
            label: "netjack boxes", executable: "/usr/bin/setpriv",
            arguments: ["--pdeathsig", "KILL", "--", "/usr/bin/unshare", "--user", "--map-current-user", "--keep-caps",
                        "--net", "--fork", "--kill-child", "/bin/bash", "-c", Self.script, "netjack-boxes", "\(count)"])
        guard holder.waitForOutput(timeout: .seconds(30), { $0.contains("\nready\n") ? true : nil }) == true else {
            let output = holder.standardOutput + holder.standardError
            holder.send(SIGKILL)
            throw IntegrationError("the netjack boxes did not come up: \(output)")
        }
        var boxes: [Box] = []
        for line in holder.standardOutput.split(separator: "\n") where line.hasPrefix("box ") {
            let fields = line.split(separator: " ")
            guard fields.count == 5, let index = Int(fields[1]), let pid = pid_t(fields[2]), fields[4] == "up" else {
                throw IntegrationError("a box line the test cannot read: \(line)")
            }
            boxes.append(Box(index: index, pid: pid, address: String(fields[3])))
        }
        boxes.sort { $0.index < $1.index }
        guard boxes.count == count + 1, boxes.first?.index == 0 else {
            throw IntegrationError("expected \(count + 1) boxes: \(holder.standardOutput)")
        }
        master = boxes[0]
        slaves = Array(boxes.dropFirst())
    }

    /// `nsenter … --`: runs the command that follows in `box` (a slave's with its own mounts).
    func wrapper(for box: Box) -> [String] {
        ["/usr/bin/nsenter", "--target", "\(box.pid)", "--user", "--net"] + (box.index == 0 ? [] : ["--mount"])
            + ["--preserve-credentials", "--"]
    }

    /// Runs `command` in `box` to its end; its standard output, or a throw with its output.
    @discardableResult
    func run(in box: Box, _ command: [String], environment: [String: String] = [:]) throws -> String {
        let (status, text, errorText) = try runToEnd(wrapper(for: box) + command, environment: environment)
        guard status == 0 else {
            throw IntegrationError("\(command) in box \(box.index) failed (\(status)): \(text)\(errorText)")
        }
        return text
    }

    /// The socket maker in a box: makes the socket asked for ("udp ADDRESS": bound to
    /// ADDRESS, port 0; "tcp -": unconnected) and passes it back over its stdin (SCM_RIGHTS).
    private static let factoryScript = #"""
        socket = __import__("socket")
        control = socket.socket(fileno=0)
        for line in control.makefile("rb"):
            kind, address = line.decode().split()
            made = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
            if kind == "udp":
                made.bind((address, 0))
            socket.send_fds(control, [b"."], [made.fileno()])
            made.close()
        """#

    enum SocketKind { case udp, tcp }

    /// A socket made in `box` (default: the master's; UDP: bound to the box's address, port 0;
    /// TCP: unconnected), owned by the caller. Sending or connecting on it goes over the
    /// boxes' network, from the box's address.
    func socket(_ kind: SocketKind, in box: Box? = nil) throws -> Int32 {
        let box = box ?? master
        return try factories.withLock { factories in
            if factories[box.index] == nil {
                var pair: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                    throw IntegrationError("socketpair: \(String(cString: strerror(errno)))")
                }
                let childEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
                let command = wrapper(for: box) + ["/usr/bin/python3", "-c", Self.factoryScript]
                let process = try ChildProcess(label: "socket maker \(box.index)", executable: command[0],
                                               arguments: Array(command.dropFirst()), standardInput: childEnd)
                try childEnd.close()
                var timeout = timeval(tv_sec: 15, tv_usec: 0)
                setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                factories[box.index] = (process, pair[0])
            }
            let end = factories[box.index]!.end
            let request = Array((kind == .udp ? "udp \(box.address)\n" : "tcp -\n").utf8)
            guard request.withUnsafeBytes({ Glibc.send(end, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
            else { throw IntegrationError("socket maker: send: \(String(cString: strerror(errno)))") }
            return try Self.receiveDescriptor(end)
        }
    }

    /// One byte with one descriptor in SCM_RIGHTS.
    private static func receiveDescriptor(_ end: Int32) throws -> Int32 {
        var byte: UInt8 = 0
        let headerSize = MemoryLayout<cmsghdr>.size
        var control = [UInt8](repeating: 0, count: headerSize + 16)
        let received = withUnsafeMutablePointer(to: &byte) { bytePointer in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: bytePointer, iov_len: 1)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    return recvmsg(end, &header, Int32(MSG_CMSG_CLOEXEC))
                }
            }
        }
        guard received == 1 else {
            throw IntegrationError("socket maker: no answer (\(received), \(String(cString: strerror(errno))))")
        }
        let length = control.withUnsafeBytes { $0.load(as: Int.self) }
        let level = control.withUnsafeBytes { $0.load(fromByteOffset: 8, as: Int32.self) }
        let type = control.withUnsafeBytes { $0.load(fromByteOffset: 12, as: Int32.self) }
        guard length >= headerSize + 4, level == SOL_SOCKET, type == Int32(SCM_RIGHTS) else {
            throw IntegrationError("socket maker: an answer without a descriptor")
        }
        return control.withUnsafeBytes { $0.load(fromByteOffset: headerSize, as: Int32.self) }
    }

    /// Ends the socket maker and the boxes (the holder's `sleep` gets SIGTERM; unshare and
    /// the slave boxes follow), and waits for them.
    func stop() {
        guard !stopped else { return }
        stopped = true
        let makers = factories.withLock { factories in
            defer { factories.removeAll() }
            return Array(factories.values)
        }
        for maker in makers {
            Glibc.close(maker.end)
            maker.process.stop()
        }
        kill(master.pid, SIGTERM)
        if !holder.waitForExit(timeout: .seconds(10)) { holder.send(SIGKILL) }
        holder.waitForExit(timeout: .seconds(5))
        let deadline = ContinuousClock.now + .seconds(10)
        while slaves.contains(where: { kill($0.pid, 0) == 0 }) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)  // polls a condition (with a deadline)
        }
    }

    deinit { stop() }
}
