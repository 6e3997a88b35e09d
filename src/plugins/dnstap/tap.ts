// One dnstap target of a server block: turns each answered query (the finish hook, fast path included)
// into CLIENT_QUERY and CLIENT_RESPONSE messages, and each forwarded try into FORWARDER_QUERY and
// FORWARDER_RESPONSE, and writes them into its frame stream. Per query: a reused message object, a few
// integer fields and the octets written once into the stream's chunk; the DNS messages' octets only
// with `full`.

import type { QueryDone } from "../../metrics/query-done.ts";
import type { ForwardExchange, ForwardTap } from "../forward/tap.ts";
import type { FrameStream } from "./frame-stream.ts";
import type { Msg } from "../../dns/message.ts";
import {
  DOH,
  DOT,
  INET,
  INET6,
  MessageType,
  TCP,
  TapMessage,
  UDP,
  messageSize,
  payloadSize,
  writePayload,
} from "./protobuf.ts";
import { ipOctets } from "./ip-octets.ts";
import type { HeadFor } from "./extra.ts";
import { encode } from "../../dns/encode.ts";
import { wireRecords } from "../../dns/wire-msg.ts";

export interface TapOptions {
  /** The encoded identity, version and extra fields (protobuf.ts envelopeHead). */
  head: Buffer;
  /** With placeholders in `extra`: the head of a message about one query (extra.ts). */
  headFor?: HeadFor;
  /** Include the DNS messages' octets (`full`). */
  full: boolean;
  /** Which Message.Type values are sent: bit 1 << type. */
  types: number;
}

export class Tap implements ForwardTap {
  readonly stream: FrameStream;
  readonly #o: TapOptions;
  readonly #m = new TapMessage();

  constructor(stream: FrameStream, o: TapOptions) {
    this.stream = stream;
    this.#o = o;
  }

  /** The finish hook: the client's query and the reply it got. Both messages share the addresses,
   * ports and query time, filled once. */
  client(q: QueryDone): void {
    const types = this.#o.types;
    const m = this.#m;
    const nowMs = performance.timeOrigin + performance.now();
    const head = this.#o.headFor?.(q) ?? this.#o.head;
    this.#clientCommon(q, MessageType.CLIENT_QUERY, nowMs);
    if (types & (1 << MessageType.CLIENT_QUERY)) {
      if (this.#o.full && q.queryBytes !== undefined) setSlice(m.query, q.queryBytes, 0, q.size);
      this.#emit(head);
    }
    if (types & (1 << MessageType.CLIENT_RESPONSE)) {
      m.type = MessageType.CLIENT_RESPONSE;
      m.query.bytes = undefined;
      setTime(m, false, nowMs);
      if (this.#o.full && q.replyBytes !== undefined) {
        const at = q.replyAt ?? 0;
        setSlice(m.response, q.replyBytes, at, at + (q.replyLength ?? 0));
      }
      this.#emit(head);
    }
  }

  /** forward's report of one try upstream. */
  forwarded(e: ForwardExchange): void {
    const types = this.#o.types;
    const nowMs = performance.timeOrigin + performance.now();
    const q = e.query.question[0];
    const head =
      this.#o.headFor !== undefined && q !== undefined
        ? this.#o.headFor({ qname: q.name.toLowerCase(), qtype: q.type, remoteAddress: e.clientAddress })
        : this.#o.head;
    if (types & (1 << MessageType.FORWARDER_QUERY)) {
      this.#forwardCommon(e, MessageType.FORWARDER_QUERY);
      if (this.#o.full) setSlice(this.#m.query, encode(e.query), 0, -1);
      this.#emit(head);
    }
    if (e.reply !== undefined && types & (1 << MessageType.FORWARDER_RESPONSE)) {
      this.#forwardCommon(e, MessageType.FORWARDER_RESPONSE);
      setTime(this.#m, false, nowMs);
      if (this.#o.full) {
        const wire = wireOf(e.reply);
        setSlice(this.#m.response, wire.bytes, 0, wire.end);
      }
      this.#emit(head);
    }
  }

  #clientCommon(q: QueryDone, type: number, nowMs: number): void {
    const m = this.#m;
    m.reset(type);
    m.protocol = q.proto === "tcp" ? TCP : UDP;
    m.queryAddrLength = ipOctets(q.remoteAddress, m.queryAddr);
    m.family = familyOf(m.queryAddrLength);
    m.queryPort = q.remotePort;
    if (q.localAddress !== undefined) {
      const n = ipOctets(q.localAddress, m.responseAddr);
      m.responseAddrLength = n === m.queryAddrLength ? n : 0;
      m.responsePort = q.localPort ?? -1;
    }
    setTime(m, true, nowMs - q.micros / 1000);
  }

  #forwardCommon(e: ForwardExchange, type: number): void {
    const m = this.#m;
    m.reset(type);
    m.protocol = e.proto === "udp" ? UDP : e.proto === "tcp" ? TCP : e.proto === "https" ? DOH : DOT;
    m.responseAddrLength = ipOctets(e.upstreamHost, m.responseAddr);
    m.family = familyOf(m.responseAddrLength);
    m.responsePort = e.upstreamPort;
    const n = ipOctets(e.clientAddress, m.queryAddr);
    if (n === m.responseAddrLength) {
      m.queryAddrLength = n;
      m.queryPort = e.clientPort;
    }
    setTime(m, true, e.startedMs);
  }

  /** Writes the message as one frame, or counts it dropped. */
  #emit(head: Buffer): void {
    const m = this.#m;
    const inner = messageSize(m);
    const n = payloadSize(head, inner);
    const buf = this.stream.reserve(n);
    if (buf === undefined) return;
    this.stream.commit(writePayload(buf, this.stream.frameAt, head, m, inner));
  }
}

function familyOf(addrLength: number): number {
  return addrLength === 4 ? INET : addrLength === 16 ? INET6 : 0;
}

/** Sets the query's (or response's) time from ms since the epoch. */
function setTime(m: TapMessage, query: boolean, ms: number): void {
  const sec = Math.floor(ms / 1000);
  const nsec = Math.min(999_999_999, Math.round((ms - sec * 1000) * 1e6));
  if (query) {
    m.querySec = sec;
    m.queryNsec = nsec;
  } else {
    m.responseSec = sec;
    m.responseNsec = nsec;
  }
}

/** Points `s` at bytes[start..end); end -1 for the whole of bytes. */
function setSlice(s: TapMessage["query"], bytes: Uint8Array, start: number, end: number): void {
  s.bytes = bytes;
  s.start = start;
  s.end = end < 0 ? bytes.length : end;
}

/** A reply's octets as they came (a relayed reply keeps them), else encoded again. */
function wireOf(reply: Msg): { bytes: Uint8Array; end: number } {
  const w = wireRecords(reply);
  if (w !== undefined) return { bytes: w.wire, end: w.wire.length };
  const b = encode(reply);
  return { bytes: b, end: b.length };
}
