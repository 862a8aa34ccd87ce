// The page's one WebSocket to SoundFit (OSCQuery: the HTTP port serves it too). Binary frames
// carry OSC both ways, with the same contract as UDP; text frames carry LISTEN/IGNORE.
import { decodePacket, encodeMessage } from "./osc.js";

// The page's own token (`?token=` of its URL, printed by SoundFit in its ready line when the
// port requires one) goes on to the WebSocket, which SoundFit opens only with it.
function socketURL() {
  const token = new URLSearchParams(location.search).get("token");
  return `ws://${location.host}/` + (token ? `?token=${encodeURIComponent(token)}` : "");
}

export class Connection {
  constructor(url = socketURL()) {
    this.url = url;
    this.listeners = new Map();   // address → [handler(args)]
    this.listening = new Set();   // paths LISTENed to, sent again after a reconnect
    this.onStatus = () => {};
    this.queue = [];              // frames sent before the socket opened (bounded)
    this.open();
  }

  open() {
    const socket = new WebSocket(this.url);
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      this.onStatus("connected");
      this.emit("#open", []);
      for (const path of this.listening) socket.send(JSON.stringify({ COMMAND: "LISTEN", DATA: path }));
      for (const frame of this.queue.splice(0)) socket.send(frame);
    };
    socket.onmessage = (event) => {
      if (typeof event.data === "string") return this.emit("#text", [event.data]);
      let messages;
      try { messages = decodePacket(new Uint8Array(event.data)); }
      catch (error) { return this.emit("/error", ["", `undecodable frame from SoundFit: ${error.message}`]); }
      for (const { address, args } of messages) this.emit(address, args);
    };
    socket.onclose = () => { this.onStatus("disconnected, retrying"); setTimeout(() => this.open(), 1000); };
    this.socket = socket;
  }

  emit(address, args) {
    for (const handler of this.listeners.get(address) ?? []) handler(args, address);
    if (address.startsWith("#")) return;  // the socket's own events, not messages
    for (const handler of this.listeners.get("*") ?? []) handler(args, address);
  }

  /** Calls `handler(args, address)` for every message to `address` ("*": every message;
   *  "#open": each time the socket opens, "#text": a text frame). */
  on(address, handler) {
    if (!this.listeners.has(address)) this.listeners.set(address, []);
    this.listeners.get(address).push(handler);
  }

  /** Whether the socket is open now (else "#open" is emitted when it opens). */
  get isOpen() { return this.socket.readyState === WebSocket.OPEN; }

  /** Sends one OSC message (queued until the socket is open; at most 256 wait). */
  send(address, ...args) {
    this.sendFrame(encodeMessage(address, args));
  }

  sendFrame(frame) {
    if (this.isOpen) this.socket.send(frame);
    else if (this.queue.length < 256) this.queue.push(frame);
  }

  /** Asks SoundFit to stream the value changes of `path` (OSCQuery LISTEN). */
  listen(path) {
    this.listening.add(path);
    if (this.isOpen) this.socket.send(JSON.stringify({ COMMAND: "LISTEN", DATA: path }));
  }
}
