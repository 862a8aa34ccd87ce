import Logging
import OSCCore
import SoundFitModel
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState
import Synchronization

/// SoundFit's OSC surface: maps OSC addresses to the parameters and to the commands of
/// `OSCCommandTable`, and answers every request with a reply, `/state` reports for changes, or
/// an `/error` for anything rejected; subscribers get feedback.
///
/// It is assembled from pieces with one job each: the ingress (own endpoint, allow-list,
/// decoding), routing through the command table (`+Dispatch`), the parameter requests and
/// their `/state` reports, the subscriber feedback, and the status reports. It talks to its
/// peers only through an `OSCTransport`; replies go back over the transport a request came from.
///
/// Thread rules: packets are handled on the transport's receive thread, synchronously, so
/// requests are accepted in the order they arrived; states and asynchronous commands are
/// answered from tasks.
public final class OSCControlSurface: Sendable {
    public static let version = SoundFitVersion.current
    /// Datagrams larger than this are dropped with a log line.
    public static let maximumPacketBytes = 16384
    /// Messages one packet may carry (a bundle's, nested ones included); more is refused whole.
    public static let maximumMessagesPerPacket = 256
    /// Messages with an address pattern one packet may carry: each is matched against every
    /// parameter, the costliest routing there is; more is refused whole.
    public static let maximumPatternMessagesPerPacket = 32
    /// How often counts of rate-limited log lines that were held back are written.
    static let suppressedLogInterval: Duration = .seconds(10)
    /// How often ended subscription leases and confirmation windows are swept (only while
    /// there are any).
    static let expiryInterval: Duration = .milliseconds(500)

    let runtime: SoundFitRuntime
    /// The datagram transport: the surface listens on it, and `osc.udp://` subscriptions are
    /// sent from it.
    let transport: any OSCTransport
    /// Further transports the surface listens on (OSC over TCP); their peers are answered over them.
    let streams: [any OSCTransport]
    let logger: Logger
    let ingress: OSCIngress
    let replies: OSCReplies
    let parameters: OSCParameterRequests
    /// Requests answered later (sets, asynchronous commands) until they end: what `/sync` waits for.
    let pending = PendingRequests()
    let feedback: SubscriberFeedback
    /// The transport's budget when the surface is exposed to the network.
    let budgeted: BudgetedTransport?
    let status: @Sendable () -> SurfaceStatus
    /// The hearing test `/test/*` drives, and the sender of the last `/test/start`, who gets its reports.
    let hearingTest: HearingTestRunner
    let hearingTestStarter = Mutex<OSCSender?>(nil)
    /// The calibration tone and table `/calibration*` drives.
    let calibrator: Calibrator
    /// The opt-in meter streams (`/meters/subscribe`).
    let meters: OSCMeterStream
    /// Each source's share of the receive threads (`SourceWorkBudgets`).
    let workBudgets = Mutex(SourceWorkBudgets())
    /// Packets dropped for their source's work budget are logged at most a few times per interval.
    let throttled: RateLimitedLog<String>
    private let keeper = Mutex<StateKeeper?>(nil)
    /// Patches and durable state, once attached.
    var stateKeeper: StateKeeper? { keeper.withLock { $0 } }
    private let midi = Mutex<MIDIControl?>(nil)
    /// MIDI control (`/midi/*`), once attached.
    var midiControl: MIDIControl? { midi.withLock { $0 } }

    /// A surface on the UDP socket and, when given, the TCP listener.
    public convenience init(runtime: SoundFitRuntime, socket: OSCSocket, tcp: OSCTCPListener? = nil, logger: Logger,
                            allowList: OSCAllowList = .everyone, exposure: OSCExposure = .loopback,
                            subscriptionLease: Duration = SubscriberRegistry.defaultLease,
                            hearingTest: HearingTestRunner? = nil,
                            status: @escaping @Sendable () -> SurfaceStatus) {
        self.init(runtime: runtime, transport: socket, streams: tcp.map { [$0] } ?? [], logger: logger,
                  allowList: allowList, exposure: exposure, subscriptionLease: subscriptionLease,
                  hearingTest: hearingTest, status: status)
    }

    /// A surface on any transports (an `InMemoryOSCTransport` in unit tests). Exposed to the
    /// network, everything it sends over the datagram transport draws on a per-address budget
    /// (`SourceBudgets`); a stream's peers are connections, whose addresses cannot be forged.
    /// Without `hearingTest`, the surface makes one that keeps no results.
    public init(runtime: SoundFitRuntime, transport: any OSCTransport, streams: [any OSCTransport] = [], logger: Logger,
                allowList: OSCAllowList = .everyone, exposure: OSCExposure = .loopback,
                subscriptionLease: Duration = SubscriberRegistry.defaultLease,
                hearingTest: HearingTestRunner? = nil, calibrator: Calibrator? = nil,
                status: @escaping @Sendable () -> SurfaceStatus) {
        self.runtime = runtime
        let calibrator = calibrator ?? Calibrator(runtime: runtime)
        self.calibrator = calibrator
        self.hearingTest = hearingTest ?? HearingTestRunner(runtime: runtime) { calibrator.busyReason }
        meters = OSCMeterStream(engine: runtime.engine)
        self.streams = streams
        switch exposure {
        case .loopback:
            self.transport = transport
            budgeted = nil
        case .network:
            let budgeted = BudgetedTransport(transport) { [logger] line in logger.warning("\(line)") }
            self.transport = budgeted
            self.budgeted = budgeted
        }
        self.logger = logger
        self.status = status
        ingress = OSCIngress(allowList: allowList, logger: logger)
        throttled = RateLimitedLog { [logger] line in logger.warning("\(line)") }
        replies = OSCReplies(logger: logger)
        parameters = OSCParameterRequests(runtime: runtime, replies: replies, pending: pending)
        feedback = SubscriberFeedback(transport: self.transport, allowList: allowList, exposure: exposure,
                                      lease: subscriptionLease, logger: logger)
    }

    /// Attaches patches and durable state (before `run`).
    public func attach(_ stateKeeper: StateKeeper) {
        keeper.withLock { $0 = stateKeeper }
        parameters.persistence.attach(stateKeeper)
    }

    /// Attaches MIDI control (before `run`).
    public func attach(_ midiControl: MIDIControl) {
        midi.withLock { $0 = midiControl }
    }

    /// Tells subscribers what MIDI control did on its own: a MIDI message that changed nothing
    /// arrives as `/error ,s address ,s reason` (the current patch and parameter values a MIDI
    /// message changed arrive as from any other client).
    public func midiReported(_ report: MIDIControlReport) {
        guard case .refused(let address, let reason) = report else { return }
        feedback.enqueue { $0.enqueueNotification(OSCMessage("/error", [.string(address), .string(reason)]), origin: nil) }
    }


    /// Answers on the transport and feeds subscribers until the task running it is cancelled.
    /// Closing the transport is the owner's job.
    public func run() async {
        let feeds = subscribeToFeeds()
        let observations = observeChanges()
        let hearingTestEvents = hearingTest.observeEvents { [weak self] event in self?.forward(event) }
        defer {
            runtime.stopObserving(observations.changes)
            runtime.stopObserving(observations.invalidations)
            hearingTest.stopObserving(hearingTestEvents)
        }
        startReceiving()
        await feeds.run()
    }

    /// Tells subscribers about a new current patch (or a change of its modified or pending flag).
    public func currentPatchChanged(_ current: CurrentPatch?) {
        let message = OSCCommandTable.currentPatchMessage(current, pending: stateKeeper?.sessionValuesPending ?? false)
        feedback.enqueue { $0.enqueueNotification(message, origin: nil) }
    }

    /// Every transport hands its packets to `receive`, on its own thread. A peer whose
    /// connection closed loses its subscription.
    private func startReceiving() {
        for transport in [transport] + streams {
            transport.startReceiving(
                maximumPacketBytes: Self.maximumPacketBytes,
                onPacket: { [self] bytes, peer in receive(bytes, from: OSCSender(peer: peer, transport: transport)) },
                onOversized: { [self] size, peer in oversized(size, from: OSCSender(peer: peer, transport: transport)) },
                onDisconnected: { [feedback, meters] peer in
                    let sender = OSCSender(peer: peer, transport: transport)
                    feedback.disconnected(sender)
                    _ = meters.unsubscribe(sender)
                })
        }
    }

    /// Queues value feedback and invalidations for subscribers on the thread that makes them,
    /// before the request that caused them ends: `/synced` (sent after the queued feedback
    /// left) then follows them too. Hearing-test events are forwarded the same way (`run()`).
    private func observeChanges() -> (changes: ChangeObservation, invalidations: InvalidationObservation) {
        let feedback = feedback
        let changes = parameters.observeAppliedChanges { descriptor, change, sender in
            feedback.enqueue { $0.enqueueFeedback(descriptor, value: change.value, origin: sender?.peer) }
        }
        let invalidations = runtime.observeInvalidations { invalidation in
            feedback.enqueue { $0.enqueueInvalidation(invalidation.addresses, cause: invalidation.cause.rawValue) }
        }
        return (changes, invalidations)
    }

    /// The streams subscribers are fed from, subscribed to at once so no change is missed.
    private func subscribeToFeeds() -> Feeds {
        Feeds(surface: self, sessions: runtime.controller.sessionUpdates())
    }

    /// The surface's long-lived loops: session changes to subscribers, the periodic log line
    /// for drops held back by the rate limit, and the lease sweep.
    private struct Feeds: Sendable {
        let surface: OSCControlSurface
        let sessions: AsyncStream<ProcessingSession?>

        func run() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [surface, sessions] in
                    for await _ in sessions {
                        surface.feedback.enqueue { $0.enqueueNotification(surface.sessionMessage(), origin: nil) }
                    }
                }
                group.addTask { [surface] in
                    while (try? await Task.sleep(for: OSCControlSurface.suppressedLogInterval)) != nil {
                        surface.ingress.flushSuppressedLogLines()
                        surface.throttled.flushSuppressed()
                        surface.budgeted?.flushSuppressedLogLines()
                    }
                }
                group.addTask { [surface] in
                    await surface.feedback.sweepExpired(every: OSCControlSurface.expiryInterval)
                }
            }
        }
    }
}
