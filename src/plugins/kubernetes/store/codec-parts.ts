// What the store's codecs (codecs.ts, group-codec.ts) share: addresses and ports as bytes.

import type { ByteReader, ByteWriter } from "../../../offheap/bytes.ts";
import type { SvcPort } from "../model/slim-types.ts";
import { ipText } from "./packed.ts";
import { ipv4Bits } from "../../../dns/ipv4.ts";

/** The empty list every read returns, as slim.ts does: one frozen array, not one per value. */
export const NONE: readonly never[] = Object.freeze([]);

/** Addresses: each a tag byte, then 4 bytes for an IPv4 address, or the text of anything else (an
 * IPv6 address, or a hostname in a service's external list). */
export function writeAddresses(w: ByteWriter, list: readonly string[]): void {
  w.uint(list.length);
  for (const a of list) {
    const bits = ipv4Bits(a);
    if (bits < 0) {
      w.u8(TEXT);
      w.str(a);
    } else {
      w.u8(IPV4);
      w.i32(bits);
    }
  }
}

export function readAddresses(r: ByteReader): readonly string[] {
  const n = r.count();
  if (n === 0) return NONE;
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = r.u8() === IPV4 ? ipText(r.i32()) : r.str();
  return out;
}

const IPV4 = 0;
const TEXT = 1;

/** Ports: each its name, then one integer holding the port number and its protocol's code (4 x port
 * + code): most ports take 2 or 3 bytes. A protocol other than the three has code 3 and its text. */
export function writePorts(w: ByteWriter, ports: readonly SvcPort[]): void {
  w.uint(ports.length);
  for (const p of ports) {
    if (!Number.isSafeInteger(p.port) || p.port < 0 || p.port >= 2 ** 50) {
      throw new RangeError(`offheap: port ${p.port} is not an integer from 0 to 2^50`);
    }
    const code = PROTOS.indexOf(p.proto);
    w.str(p.name);
    w.uint(p.port * 4 + (code < 0 ? OTHER_PROTO : code));
    if (code < 0) w.str(p.proto);
  }
}

export function readPorts(r: ByteReader): readonly SvcPort[] {
  const n = r.count();
  if (n === 0) return NONE;
  const out = new Array<SvcPort>(n);
  for (let i = 0; i < n; i++) {
    const name = r.str();
    const x = r.uint();
    const code = x % 4;
    const proto = code === OTHER_PROTO ? r.str() : PROTOS[code];
    out[i] = { name, proto, port: (x - code) / 4 };
  }
  return out;
}

const PROTOS = ["tcp", "udp", "sctp"];
const OTHER_PROTO = 3;
