// The record of one answered query that the finish hooks (SetupContext.onQueryDone) see: the server
// fills it, log, dnstap and the metrics read it.

/** What the finish hooks see of one answered query. Built once per query; do not keep it. */
export interface QueryDone {
  server: string;
  zone: string;
  proto: "udp" | "tcp";
  remoteAddress: string;
  remotePort: number;
  id: number;
  /** Canonical (lowercase, absolute) query name. */
  qname: string;
  /** The same name in wire form, ASCII-lowercased, from offset 0 up to its root label (octets after
   * it belong to the server): what a hook that must not build a string per query reads. */
  readonly nameWire: Uint8Array;
  qtype: number;
  qclass: number;
  /** Size of the query in bytes. */
  size: number;
  do: boolean;
  /** The client's EDNS buffer size, or 512 without EDNS. */
  bufsize: number;
  rcode: number;
  /** Header flags of the reply as dig prints them: "qr,aa,rd". */
  readonly rflags: string;
  /** Size of the reply in bytes, after truncation. */
  rsize: number;
  /** Time from the packet's arrival to the reply being handed to the socket, in seconds. */
  readonly duration: number;
  /** The same in whole microseconds: a small integer, which metrics take without allocating. */
  micros: number;
  /** True when the reply came from the answer cache (the fast path). */
  cached: boolean;
  /** The plugin that produced the reply, also when replayed from the answer cache ("" if unknown). */
  plugin: string;
  /** The server's address and port the query came to (for UDP, the address the listener bound). */
  localAddress?: string;
  localPort?: number;
  /** The query's octets, queryBytes[0..size), only while the hooks run (dnstap's `full` reads them). */
  queryBytes?: Uint8Array;
  /** The reply sent (its last message, when streamed), replyBytes[replyAt..replyAt + replyLength),
   * only while the hooks run. */
  replyBytes?: Uint8Array;
  replyAt?: number;
  replyLength?: number;
}
