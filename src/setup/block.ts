// What a server block's settings directives (bind, bufsize, timeouts, rrl) fill in for the server, and
// what the block's plugins offer each other.

import type { Scanned } from "../dns/scan.ts";

/** What the pipeline asks of a block's response-rate limit (`rrl`) for each UDP reply, the fast path's
 * too: the reply to send (itself, or a shorter one), or undefined to send nothing. */
export interface ReplyLimiter {
  limit(reply: Buffer, query: Scanned, remoteAddress: string, now: number): Buffer | undefined;
}

/** `timeouts`: for TCP connections, ms from connecting until the first query is whole (read), that a
 * reply may wait for the client to take it (write), and from one reply until the next query is whole
 * (idle). */
export interface TcpTimeoutSettings {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
}

/** CoreDNS's `client_auth` policies (Go's tls.ClientAuthType): whether a client certificate is asked
 * for, whether one must be given, and whether it must chain to the CA. */
export type ClientAuth = "nocert" | "request" | "require" | "verify_if_given" | "require_and_verify";

/** `tls CERT KEY [CA]`: what a tls:// or https:// block's listener presents and asks of clients, read
 * (and checked) at set-up. */
export interface TlsSettings {
  cert: Buffer;
  key: Buffer;
  /** CAs client certificates are checked against; undefined for the system's (Node's bundled) CAs. */
  ca?: Buffer;
  clientAuth: ClientAuth;
  /** `keylog FILE`: where TLS secrets go, for debugging with Wireshark. */
  keylog?: string;
  /** "Corefile:3", for messages. */
  at: string;
}

/** Where a block's listener is bound: a wildcard bind is "0.0.0.0" or "::". */
export interface ListenAddress {
  address: string;
  port: number;
}

/** What a view's expression reads of a query (src/plugins/view): the question, the client and the
 * server. The pipeline fills one object again and again; do not keep it. */
export interface ViewQuery {
  readonly qname: string;
  readonly qtype: number;
  readonly qclass: number;
  readonly id: number;
  readonly opcode: number;
  /** The OPT record's DO bit. */
  readonly dnssecOk: boolean;
  /** The OPT record's UDP payload size, 0 without one. */
  readonly udpSize: number;
  readonly proto: "udp" | "tcp";
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
  /** The query's size in octets. */
  readonly size: number;
}

/** A block's `trace`: asked once for every query of the block that the server answers (replays
 * included), on a listener that has a block with `trace` only. */
export interface BlockTrace {
  /** Counts the query: true when it is to be traced (one in `every`). */
  sample(): boolean;
}

/** A block's `view`: it answers only the queries its expressions hold true for. */
export interface BlockView {
  readonly name: string;
  matches(q: ViewQuery): boolean;
}

export interface BlockSettings {
  /** Addresses to listen on; empty means all (0.0.0.0 and ::). Filled by `bind`. */
  bind: string[];
  /** The DNS port of the block's first key as configured: its own, else 53 or -dns.port (0: a free
   * one, picked when the listener opens). Unset outside a server (tests). */
  readonly port?: number;
  /** Largest UDP reply this block sends, whatever the client's EDNS size (`bufsize`); undefined for
   * the client's size up to EDNS_UDP_SIZE. */
  udpSize?: number;
  /** TCP time limits in ms, from `timeouts`; unset ones keep the server's defaults. */
  timeouts?: TcpTimeoutSettings;
  /** The certificate a tls:// or https:// block serves with, from `tls`. */
  tls?: TlsSettings;
  /** The response-rate limit of the block's UDP replies, from `rrl`. */
  rrl?: ReplyLimiter;
  /** Set by `view`: the block answers only the queries it matches; blocks of one zone and port are
   * asked in Corefile order, and the first that matches (or has no view) answers. */
  view?: BlockView;
  /** The TSIG secrets of the block by key name (canonical), and the zones they sign (`tsig`): the
   * server checks signed queries against them, with any algorithm of RFC 8945 6 (as CoreDNS), and
   * signs their replies. */
  tsig?: { readonly secrets: ReadonlyMap<string, Buffer>; readonly zones: readonly string[] };
  /** Set by a plugin that answers NOTIFY messages (secondary); the block's NOTIFYs are NOTIMP without. */
  notify?: boolean;
  /** Its AAAA answers depend on the client's address family (dns64 without allow_ipv4): the listener's
   * answer store keys an IPv4 client's AAAA question apart from an IPv6 client's. */
  familyKeys?: boolean;
  /** Set by `debug`: an exception a plugin of this block did not mean to throw (not a PluginError) is not
   * recovered (answered SERVFAIL) but ends the process (src/runtime/panic.ts). */
  debug?: boolean;
  /** Set by `trace`: which of the block's queries are traced. A sampled query takes the plugin chain
   * even when the answer store holds its reply, so that its spans are the work it really took. */
  trace?: BlockTrace;
  /** The block's directive names, in execution order. */
  readonly directives: readonly string[];
  /** What a block's plugins offer each other, by name: kubernetes offers its client search paths
   * here for autopath. Filled during setup, so read it at start-up (plugins set up in chain order). */
  readonly shared: Map<string, unknown>;
}
