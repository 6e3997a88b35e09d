// What the finish hooks (log, metrics) see of one answered query: one object per pipeline, refilled
// for every query.

import type { QueryDone } from "../metrics/query-done.ts";
import type { Scanned } from "../dns/scan.ts";
import type { Edns } from "../dns/message.ts";
import type { Peer } from "./peer.ts";
import { PLAIN_UDP_SIZE } from "../dns/constants.ts";

const ROOT_WIRE = new Uint8Array(1);

/** What the finish hooks see of a query: one per pipeline, filled anew for each query (hooks run
 * synchronously and must not keep it). The text qname is built only when a hook reads it (log does,
 * the metrics hook does not): one string less per query answered with only metrics on. */
export class FinishedQuery implements QueryDone {
  server = "";
  zone = "";
  proto: QueryDone["proto"] = "udp";
  remoteAddress = "";
  remotePort = 0;
  id = 0;
  qtype = 0;
  qclass = 0;
  size = 0;
  do = false;
  bufsize = PLAIN_UDP_SIZE;
  rcode = 0;
  /** Octets 2 and 3 of the reply sent: its flags. */
  header = 0;
  rsize = 0;
  micros = 0;
  cached = false;
  plugin = "";
  localAddress = "";
  localPort = 0;
  queryBytes: Uint8Array | undefined = undefined;
  replyBytes: Uint8Array | undefined = undefined;
  replyAt = 0;
  replyLength = 0;
  #scanned: Scanned | undefined = undefined;

  reset(s: Scanned): void {
    this.id = s.id;
    this.qtype = s.qtype;
    this.qclass = s.qclass;
    this.do = s.dnssecOk;
    this.bufsize = s.udpSize > 0 ? s.udpSize : PLAIN_UDP_SIZE;
    this.#scanned = s;
  }

  /** The query's side: who sent it (`size` octets) and over what, to which `server` (its label). */
  from(peer: Peer, size: number, server: string): void {
    this.server = server;
    this.proto = peer.proto;
    this.remoteAddress = peer.remoteAddress;
    this.remotePort = peer.remotePort;
    this.localAddress = peer.localAddress;
    this.localPort = peer.localPort;
    this.size = size;
  }

  /** The query's opcode, for log's {>opcode}. */
  get opcode(): number {
    return this.#scanned?.opcode ?? 0;
  }

  /** The reply's ANCOUNT, for log's classes (NOERROR without answers is a denial); only valid
   * while the hooks run, as replyBytes is. */
  get answers(): number | undefined {
    const b = this.replyBytes;
    return b === undefined ? undefined : (b[this.replyAt + 6] << 8) | b[this.replyAt + 7];
  }

  get qname(): string {
    return this.#scanned?.qname ?? ".";
  }

  /** The query's OPT record, decoded on first read (geoip's edns-subnet reads it through log). */
  get edns(): Edns | undefined {
    return this.#scanned?.edns;
  }

  get nameWire(): Uint8Array {
    return this.#scanned?.keyBytes ?? ROOT_WIRE;
  }

  get duration(): number {
    return this.micros / 1e6;
  }

  /** The reply's flags as dig prints them ("qr,aa,rd"): only log reads them. */
  get rflags(): string {
    const h = this.header;
    const f: string[] = [];
    if (h & 0x8000) f.push("qr");
    if (h & 0x0400) f.push("aa");
    if (h & 0x0200) f.push("tc");
    if (h & 0x0100) f.push("rd");
    if (h & 0x0080) f.push("ra");
    if (h & 0x0020) f.push("ad");
    if (h & 0x0010) f.push("cd");
    return f.join(",");
  }
}
