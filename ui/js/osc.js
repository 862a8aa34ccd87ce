// A small OSC 1.0 encoder and decoder for the WebSocket: messages and bundles, the argument
// types SoundFit sends and takes (i f s b h d t T F N I c m r). Runs on the page's main thread.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An argument with an explicit OSC type: `{type: "i", value: 3}`. */
export const int = (value) => ({ type: "i", value });
export const float = (value) => ({ type: "f", value });
export const string = (value) => ({ type: "s", value });

function padded(bytes) {
  const length = (bytes.length + 4) & ~3; // at least one NUL, then to a multiple of 4
  const out = new Uint8Array(length);
  out.set(bytes);
  return out;
}

function typed(argument) {
  if (argument && typeof argument === "object" && "type" in argument) return argument;
  if (typeof argument === "string") return string(argument);
  if (typeof argument === "boolean") return { type: argument ? "T" : "F" };
  if (Number.isInteger(argument)) return int(argument);
  return float(argument);
}

function encodeArgument({ type, value }) {
  const view = (size) => { const bytes = new Uint8Array(size); return [bytes, new DataView(bytes.buffer)]; };
  switch (type) {
    case "i": { const [b, v] = view(4); v.setInt32(0, value); return b; }
    case "f": { const [b, v] = view(4); v.setFloat32(0, value); return b; }
    case "d": { const [b, v] = view(8); v.setFloat64(0, value); return b; }
    case "h": { const [b, v] = view(8); v.setBigInt64(0, BigInt(value)); return b; }
    case "s": return padded(encoder.encode(value));
    case "b": {
      const data = value instanceof Uint8Array ? value : new Uint8Array(value);
      const [size, v] = view(4); v.setInt32(0, data.length);
      const body = new Uint8Array((data.length + 3) & ~3); body.set(data);
      return concat([size, body]);
    }
    case "T": case "F": case "N": case "I": return new Uint8Array(0);
    default: throw new Error(`cannot encode OSC type ${type}`);
  }
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) { out.set(part, offset); offset += part.length; }
  return out;
}

/** Encodes one message; plain JS values get their natural type (int, float, string, bool). */
export function encodeMessage(address, args = []) {
  const arguments_ = args.map(typed);
  const tags = "," + arguments_.map((a) => a.type).join("");
  return concat([padded(encoder.encode(address)), padded(encoder.encode(tags)), ...arguments_.map(encodeArgument)]);
}

class Reader {
  constructor(bytes) { this.bytes = bytes; this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength); this.at = 0; }
  get done() { return this.at >= this.bytes.length; }
  string() {
    const end = this.bytes.indexOf(0, this.at);
    if (end < 0) throw new Error("unterminated OSC string");
    const text = decoder.decode(this.bytes.subarray(this.at, end));
    this.at = (end + 4) & ~3;
    return text;
  }
  take(size) { if (this.at + size > this.bytes.length) throw new Error("truncated OSC packet"); const at = this.at; this.at += size; return at; }
  int32() { return this.view.getInt32(this.take(4)); }
  argument(type) {
    switch (type) {
      case "i": return this.int32();
      case "f": return this.view.getFloat32(this.take(4));
      case "d": return this.view.getFloat64(this.take(8));
      case "h": case "t": return Number(this.view.getBigInt64(this.take(8)));
      case "s": case "S": return this.string();
      case "c": return String.fromCharCode(this.int32());
      case "r": case "m": return this.view.getUint32(this.take(4));
      case "b": { const size = this.int32(); const at = this.take((size + 3) & ~3); return this.bytes.slice(at, at + size); }
      case "T": return true;
      case "F": return false;
      case "N": return null;
      case "I": return Infinity;
      default: throw new Error(`unknown OSC type ${type}`);
    }
  }
}

/** Decodes a packet into a flat list of messages `{address, args}` (bundles unpacked in order). */
export function decodePacket(bytes, into = []) {
  const reader = new Reader(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  const head = reader.string();
  if (head === "#bundle") {
    reader.take(8); // timetag: the page applies everything on arrival
    while (!reader.done) {
      const size = reader.int32();
      const at = reader.take(size);
      decodePacket(reader.bytes.subarray(at, at + size), into);
    }
    return into;
  }
  const tags = reader.done ? "," : reader.string();
  const args = [...tags.slice(1)].filter((t) => t !== "[" && t !== "]").map((t) => reader.argument(t));
  into.push({ address: head, args });
  return into;
}
