// Who sent a query and over what: what the listeners (udp.ts, udp-batched.ts, tcp-connection.ts) hand
// the pipeline with each packet.

export type Proto = "udp" | "tcp";

export interface Peer {
  proto: Proto;
  remoteAddress: string;
  remotePort: number;
  localAddress: string;
  localPort: number;
  /** The transport is encrypted (tls://, https:// and grpc:// with `tls`): its listener pads the
   * replies to a query with an EDNS Padding option; the pipeline pads a signed reply itself, as the
   * padding must go in before the TSIG MAC (src/dns/padding.ts). */
  padded?: boolean;
  /** TCP: writes one message of a reply that takes several (Request.stream). */
  write?: (msg: Buffer) => Promise<boolean>;
}
