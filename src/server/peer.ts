// Who sent a query and over what: what the listeners (udp.ts, udp-batched.ts, tcp-connection.ts) hand
// the pipeline with each packet.

export type Proto = "udp" | "tcp";

export interface Peer {
  proto: Proto;
  remoteAddress: string;
  remotePort: number;
  localAddress: string;
  localPort: number;
  /** TCP: writes one message of a reply that takes several (Request.stream). */
  write?: (msg: Buffer) => Promise<boolean>;
}
