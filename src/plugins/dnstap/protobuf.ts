// The dnstap payload (dnstap.proto, "protobuf:dnstap.Dnstap") written by hand. The schema is two small
// messages and only writing is needed, so a few dozen lines beat a protobuf library here: the message
// is one reused object, its size is worked out first and its octets are written straight into the
// frame stream's output buffer, so a tapped query allocates nothing (a library builds an object tree
// and a Buffer per message). Field numbers and wire types are the schema's; proto2 fields are written
// in field-number order, as protoc does.

/** Message.Type values (dnstap.proto). */
export const MessageType = {
  CLIENT_QUERY: 5,
  CLIENT_RESPONSE: 6,
  FORWARDER_QUERY: 7,
  FORWARDER_RESPONSE: 8,
} as const;

/** SocketFamily and SocketProtocol values. */
export const INET = 1;
export const INET6 = 2;
export const UDP = 1;
export const TCP = 2;
export const DOT = 3;
export const DOH = 4;

const VARINT = 0;
const LEN = 2;
const FIXED32 = 5;

/** One region of octets: bytes[start..end). */
interface Slice {
  bytes: Uint8Array | undefined;
  start: number;
  end: number;
}

function slice(): Slice {
  return { bytes: undefined, start: 0, end: 0 };
}

/** The fields of a Dnstap message of type MESSAGE that clusterdns writes. Reused: reset() before
 * each use. Times are whole seconds and nanoseconds; 0 seconds leaves the time out. */
export class TapMessage {
  type = 0;
  family = 0;
  protocol = 0;
  /** Addresses: 4 or 16 octets in queryAddr/responseAddr, or 0 to leave them out. */
  readonly queryAddr = new Uint8Array(16);
  queryAddrLength = 0;
  readonly responseAddr = new Uint8Array(16);
  responseAddrLength = 0;
  queryPort = -1;
  responsePort = -1;
  querySec = 0;
  queryNsec = 0;
  responseSec = 0;
  responseNsec = 0;
  readonly query = slice();
  readonly response = slice();

  reset(type: number): void {
    this.type = type;
    this.family = 0;
    this.protocol = 0;
    this.queryAddrLength = 0;
    this.responseAddrLength = 0;
    this.queryPort = -1;
    this.responsePort = -1;
    this.querySec = 0;
    this.responseSec = 0;
    this.query.bytes = undefined;
    this.response.bytes = undefined;
  }
}

/** The Dnstap fields every message of one tap carries: identity (1), version (2), extra (3), written
 * once at setup as their encoded octets. */
export function envelopeHead(identity: string, version: string, extra: string | undefined): Buffer {
  const parts: Buffer[] = [];
  const field = (n: number, text: string) => {
    const v = Buffer.from(text, "utf8");
    const head = Buffer.alloc(1 + varintSize(v.length));
    head[0] = (n << 3) | LEN;
    writeVarint(head, 1, v.length);
    parts.push(head, v);
  };
  if (identity !== "") field(1, identity);
  if (version !== "") field(2, version);
  if (extra !== undefined) field(3, extra);
  return Buffer.concat(parts);
}

/** Octets of the Message (field 14's content). */
export function messageSize(m: TapMessage): number {
  let n = 1 + varintSize(m.type);
  if (m.family !== 0) n += 2;
  if (m.protocol !== 0) n += 2;
  if (m.queryAddrLength > 0) n += 2 + m.queryAddrLength;
  if (m.responseAddrLength > 0) n += 2 + m.responseAddrLength;
  if (m.queryPort >= 0) n += 1 + varintSize(m.queryPort);
  if (m.responsePort >= 0) n += 1 + varintSize(m.responsePort);
  if (m.querySec > 0) n += 1 + varintSize(m.querySec) + 5;
  n += bytesSize(m.query);
  if (m.responseSec > 0) n += 1 + varintSize(m.responseSec) + 5;
  n += bytesSize(m.response);
  return n;
}

/** Octets of the whole Dnstap payload around a Message of `inner` octets. */
export function payloadSize(head: Uint8Array, inner: number): number {
  return head.length + 1 + varintSize(inner) + inner + 2;
}

/** Writes the Dnstap payload (head, then message = 14, type = 15: MESSAGE) at out[at..]; returns the
 * end. `inner` is messageSize(m). */
export function writePayload(
  out: Uint8Array,
  at: number,
  head: Uint8Array,
  m: TapMessage,
  inner: number,
): number {
  out.set(head, at);
  at += head.length;
  out[at++] = (14 << 3) | LEN;
  at = writeVarint(out, at, inner);
  at = tagVarint(out, at, 1, m.type);
  if (m.family !== 0) at = tagVarint(out, at, 2, m.family);
  if (m.protocol !== 0) at = tagVarint(out, at, 3, m.protocol);
  if (m.queryAddrLength > 0) at = tagAddress(out, at, 4, m.queryAddr, m.queryAddrLength);
  if (m.responseAddrLength > 0) at = tagAddress(out, at, 5, m.responseAddr, m.responseAddrLength);
  if (m.queryPort >= 0) at = tagVarint(out, at, 6, m.queryPort);
  if (m.responsePort >= 0) at = tagVarint(out, at, 7, m.responsePort);
  if (m.querySec > 0) {
    at = tagVarint(out, at, 8, m.querySec);
    at = tagFixed32(out, at, 9, m.queryNsec);
  }
  if (m.query.bytes !== undefined) at = tagBytes(out, at, 10, m.query);
  if (m.responseSec > 0) {
    at = tagVarint(out, at, 12, m.responseSec);
    at = tagFixed32(out, at, 13, m.responseNsec);
  }
  if (m.response.bytes !== undefined) at = tagBytes(out, at, 14, m.response);
  out[at++] = (15 << 3) | VARINT;
  out[at++] = 1;
  return at;
}

function bytesSize(s: Slice): number {
  if (s.bytes === undefined) return 0;
  const n = s.end - s.start;
  return 1 + varintSize(n) + n;
}

function tagVarint(out: Uint8Array, at: number, field: number, v: number): number {
  out[at] = (field << 3) | VARINT;
  return writeVarint(out, at + 1, v);
}

function tagFixed32(out: Uint8Array, at: number, field: number, v: number): number {
  out[at] = (field << 3) | FIXED32;
  out[at + 1] = v & 0xff;
  out[at + 2] = (v >>> 8) & 0xff;
  out[at + 3] = (v >>> 16) & 0xff;
  out[at + 4] = (v >>> 24) & 0xff;
  return at + 5;
}

function tagBytes(out: Uint8Array, at: number, field: number, s: Slice): number {
  out[at] = (field << 3) | LEN;
  at = writeVarint(out, at + 1, s.end - s.start);
  out.set(s.bytes!.subarray(s.start, s.end), at);
  return at + s.end - s.start;
}

/** An address field: addr[0..length). */
function tagAddress(out: Uint8Array, at: number, field: number, addr: Uint8Array, length: number): number {
  out[at] = (field << 3) | LEN;
  out[at + 1] = length;
  for (let i = 0; i < length; i++) out[at + 2 + i] = addr[i];
  return at + 2 + length;
}

/** Octets of `v` (a non-negative integer up to 2^53) as a varint. */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

export function writeVarint(out: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}
