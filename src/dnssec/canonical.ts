// The canonical form of records that a signature covers (RFC 4034 6): names uncompressed and in
// lowercase, records of an RRset sorted by their rdata's octets, duplicates removed, every TTL the
// RRSIG's original TTL. The wire encoder (src/dns/encode.ts) compresses names and writes into one
// scratch for speed; a signature needs each RRset's octets apart, so they are written here, from the
// same RData shapes and to the same wire forms.

import type { RR } from "../dns/message.ts";
import { Type } from "../dns/constants.ts";
import { expandIPv6, labels, nameToWire } from "../dns/name.ts";

/** A name's uncompressed wire form, ASCII lowercased (RFC 4034 6.2). Throws for a name with none. */
export function canonicalName(name: string): Uint8Array {
  const wire = nameToWire(name);
  if (typeof wire === "string") throw new Error(`name ${name} ${wire}`);
  for (let i = 0; i < wire.length; i++) if (wire[i] >= 0x41 && wire[i] <= 0x5a) wire[i] |= 0x20;
  return wire;
}

/** The labels an RRSIG counts (RFC 4034 3.1.3): the owner's, without the root and a leading "*". */
export function signedLabels(name: string): number {
  const ls = labels(name);
  return ls.length > 0 && ls[0] === "*" ? ls.length - 1 : ls.length;
}

/** Octets in order, as a growing list of chunks joined once. */
class Writer {
  readonly parts: Uint8Array[] = [];
  bytes(b: Uint8Array): void {
    this.parts.push(b);
  }
  u8(n: number): void {
    this.parts.push(Uint8Array.of(n & 0xff));
  }
  u16(n: number): void {
    this.parts.push(Uint8Array.of((n >> 8) & 0xff, n & 0xff));
  }
  u32(n: number): void {
    this.parts.push(Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff));
  }
  latin1(s: string): void {
    this.parts.push(Buffer.from(s, "latin1"));
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The rdata of `rr` in canonical form. Throws for rdata that has no wire form (a bad address). */
export function canonicalRdata(rr: RR): Buffer {
  const d = rr.data;
  if ("raw" in d) return Buffer.from(d.raw);
  const w = new Writer();
  switch (d.type) {
    case Type.A: {
      const p = d.address.split(".").map(Number);
      if (p.length !== 4 || p.some((x) => !Number.isInteger(x) || x < 0 || x > 255))
        throw new Error(`A address ${d.address}`);
      w.bytes(Uint8Array.from(p));
      break;
    }
    case Type.AAAA: {
      const hex = expandIPv6(d.address);
      if (hex === undefined) throw new Error(`AAAA address ${d.address}`);
      w.bytes(Buffer.from(hex, "hex"));
      break;
    }
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      w.bytes(canonicalName(d.target));
      break;
    case Type.MX:
      w.u16(d.preference);
      w.bytes(canonicalName(d.exchange));
      break;
    case Type.SOA:
      w.bytes(canonicalName(d.mname));
      w.bytes(canonicalName(d.rname));
      for (const n of [d.serial, d.refresh, d.retry, d.expire, d.minimum]) w.u32(n);
      break;
    case Type.TXT:
      for (const s of d.strings) {
        if (s.length === 0) w.u8(0);
        // As the encoder: a string over 255 octets goes out as several character-strings.
        for (let i = 0; i < s.length; i += 255) {
          const part = s.slice(i, i + 255);
          w.u8(part.length);
          w.latin1(part);
        }
      }
      break;
    case Type.SRV:
      w.u16(d.priority);
      w.u16(d.weight);
      w.u16(d.port);
      w.bytes(canonicalName(d.target));
      break;
    case Type.CAA:
      w.u8(d.flags);
      w.u8(d.tag.length);
      w.latin1(d.tag);
      w.latin1(d.value);
      break;
  }
  return w.done();
}

/** The octets of one RRset as its signature covers them (RFC 4034 3.1.8.1 and 6.3): each record as
 * owner | type | class | original TTL | rdata length | rdata, sorted by rdata, duplicates once. */
export function canonicalRRset(rrs: readonly RR[], originalTtl: number): Buffer {
  const rdatas = rrs.map(canonicalRdata).sort(Buffer.compare);
  const head = new Writer();
  head.bytes(canonicalName(rrs[0].name));
  head.u16(rrs[0].type);
  head.u16(rrs[0].class);
  head.u32(originalTtl);
  const prefix = head.done();
  const w = new Writer();
  for (let i = 0; i < rdatas.length; i++) {
    if (i > 0 && rdatas[i].equals(rdatas[i - 1])) continue;
    w.bytes(prefix);
    w.u16(rdatas[i].length);
    w.bytes(rdatas[i]);
  }
  return w.done();
}

/** An NSEC type bit map (RFC 4034 4.1.2): windows of the types present, in order. */
export function typeBitmap(types: Iterable<number>): Buffer {
  const sorted = [...new Set(types)].sort((a, b) => a - b);
  const w = new Writer();
  for (let i = 0; i < sorted.length;) {
    const window = sorted[i] >> 8;
    const bits = new Uint8Array(32);
    let used = 0;
    for (; i < sorted.length && sorted[i] >> 8 === window; i++) {
      const low = sorted[i] & 0xff;
      bits[low >> 3] |= 0x80 >> (low & 7);
      used = (low >> 3) + 1;
    }
    w.u8(window);
    w.u8(used);
    w.bytes(bits.subarray(0, used));
  }
  return w.done();
}

/** NSEC rdata: the next owner name, then the type bit map. */
export function nsecRdata(next: string, types: Iterable<number>): Buffer {
  return Buffer.concat([canonicalName(next), typeBitmap(types)]);
}

export { Writer };
