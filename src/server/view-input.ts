// What a view's expression reads of a query (ViewQuery), filled from the scan and the peer: one object
// per pipeline, filled again for every query of a listener that has views.

import type { ViewQuery } from "../setup/block.ts";
import type { Peer, Proto } from "./peer.ts";
import type { Scanned } from "../dns/scan.ts";
import type { Edns } from "../dns/message.ts";

export class ViewInput implements ViewQuery {
  qname = "";
  qtype = 0;
  qclass = 0;
  id = 0;
  opcode = 0;
  dnssecOk = false;
  udpSize = 0;
  proto: Proto = "udp";
  remoteAddress = "";
  remotePort = 0;
  localAddress = "";
  localPort = 0;
  size = 0;
  #scanned: Scanned | undefined = undefined;

  /** The query's OPT record, decoded on first read (geoip's edns-subnet reads it). */
  get edns(): Edns | undefined {
    return this.#scanned?.edns;
  }

  fill(s: Scanned, size: number, peer: Peer): this {
    this.#scanned = s;
    this.qname = s.qname;
    this.qtype = s.qtype;
    this.qclass = s.qclass;
    this.id = s.id;
    this.opcode = s.opcode;
    this.dnssecOk = s.dnssecOk;
    this.udpSize = s.udpSize;
    this.size = size;
    this.proto = peer.proto;
    this.remoteAddress = peer.remoteAddress;
    this.remotePort = peer.remotePort;
    this.localAddress = peer.localAddress;
    this.localPort = peer.localPort;
    return this;
  }
}
