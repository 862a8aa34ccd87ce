import SoundFitOSC

/// What the HTTP and WebSocket port lets one client hold, so nothing grows without bound. Each
/// bound answers clearly when it is hit (see docs/osc-guide.md, "OSCQuery, WebSocket and the web port").
public struct WebLimits: Sendable {
    /// Open connections at a time (HTTP and WebSocket together). One more is answered
    /// `503 Service Unavailable` and closed at once.
    public var maximumConnections = 32
    /// A request head (request line and headers) larger than this is answered `431` and the
    /// connection closed. (NIO's parser refuses heads over 80 KiB before this check: `400`.)
    public var maximumHeadBytes = 8 * 1024
    /// A request body larger than this is answered `413` and the connection closed.
    public var maximumBodyBytes = 64 * 1024
    /// A request must arrive whole (head and body) within this long of the connection opening
    /// or of the last answer; otherwise `408` and the connection is closed. This also ends idle
    /// keep-alive connections, and holds a slowloris client no longer than this.
    public var requestTimeout: Duration = .seconds(10)
    /// A WebSocket that sends nothing for this long is pinged; one that answers nothing for as
    /// long again is closed. (Browsers answer pings by themselves.)
    public var webSocketPingInterval: Duration = .seconds(30)
    /// The largest WebSocket message (after reassembling fragments): OSC's own packet bound.
    /// A larger one closes the socket with status 1009 (message too big).
    public var maximumFrameBytes = OSCControlSurface.maximumPacketBytes
    /// Bytes queued for a client that does not read (beyond the kernel's buffer); past this
    /// the connection is closed: a slow reader is dropped, never buffered forever.
    public var maximumQueuedBytes = 256 * 1024

    public init() {}
}
