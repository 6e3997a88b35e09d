// An endpoint group (one EndpointSlice, or one subset of an Endpoints object) as bytes: endpoints are
// the most numerous thing the store holds, so each is a flag byte, 4 bytes of IPv4 address (or the
// text of an IPv6 one), and its label only when that is not the dashed address. The slice's endpoints
// share a few topologies (zone, hinted zones): each is written once per group, and an endpoint names
// it by its place, so a zone is read into one string that all its endpoints share.

import type { ByteReader, ByteWriter } from "../../../offheap/bytes.ts";
import type { Endpoint, EndpointGroup } from "../model/slim-types.ts";
import { dashedKey, ipText, type IPKey } from "./packed.ts";
import { NONE, readPorts, writePorts } from "./codec-parts.ts";
import { ipv4Bits } from "../../../dns/ipv4.ts";

/** An endpoint's flag byte. */
const READY = 1;
/** Its topology's place in the group's list follows the address. */
const TOPOLOGY = 2;
/** The address is text (IPv6), not 4 bytes. */
const TEXT_IP = 4;
/** Its label follows: it is not the dashed address. */
const LABEL = 8;

/** A topology's flag byte. */
const ZONE = 1;
const FOR_ZONES = 2;

/** A group's distinct topologies are looked for among the first this many: a group with more (which
 * no cluster has) writes the rest once per endpoint instead of searching a long list. */
const SEARCHED = 32;

// Scratch of one write and one read at a time (both run to the end without yielding).
const writeZone: (string | undefined)[] = [];
const writeFor: (readonly string[] | undefined)[] = [];
let writeTopology = new Int32Array(256);
const readZone: (string | undefined)[] = [];
const readFor: (readonly string[] | undefined)[] = [];

/** Service key, ports, the topologies, then the endpoints. */
export function writeGroup(w: ByteWriter, g: EndpointGroup): void {
  w.str(g.service);
  writePorts(w, g.ports);
  const eps = g.endpoints;
  if (writeTopology.length < eps.length) writeTopology = new Int32Array(eps.length * 2);
  let topologies = 0;
  for (let i = 0; i < eps.length; i++) {
    const { zone, forZones } = eps[i];
    let t = -1;
    if (zone !== undefined || forZones !== undefined) {
      t = findTopology(Math.min(topologies, SEARCHED), zone, forZones);
      if (t < 0) {
        t = topologies++;
        writeZone[t] = zone;
        writeFor[t] = forZones;
      }
    }
    writeTopology[i] = t;
  }
  w.uint(topologies);
  for (let t = 0; t < topologies; t++) {
    const zone = writeZone[t];
    const forZones = writeFor[t];
    w.u8((zone !== undefined ? ZONE : 0) | (forZones !== undefined ? FOR_ZONES : 0));
    if (zone !== undefined) w.str(zone);
    if (forZones !== undefined) w.strs(forZones);
    writeZone[t] = writeFor[t] = undefined;
  }
  w.uint(eps.length);
  for (let i = 0; i < eps.length; i++) {
    const e = eps[i];
    const ip = e.ip;
    const name = e.name;
    const bits = ipv4Bits(ip);
    const t = writeTopology[i];
    const label = !isDashed(name, ip);
    w.u8((e.ready ? READY : 0) | (t >= 0 ? TOPOLOGY : 0) | (bits < 0 ? TEXT_IP : 0) | (label ? LABEL : 0));
    if (bits < 0) w.str(ip);
    else w.i32(bits);
    if (t >= 0) w.uint(t);
    if (label) w.str(name);
  }
}

/** `name === dashed(ip)`, without making the dashed text: every "." and ":" of the address a "-". */
function isDashed(name: string, ip: string): boolean {
  if (name.length !== ip.length) return false;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (name.charCodeAt(i) !== (c === DOT || c === COLON ? DASH : c)) return false;
  }
  return true;
}

const DOT = 46;
const COLON = 58;
const DASH = 45;

function findTopology(
  among: number,
  zone: string | undefined,
  forZones: readonly string[] | undefined,
): number {
  for (let t = 0; t < among; t++) {
    if (writeZone[t] === zone && sameList(writeFor[t], forZones)) return t;
  }
  return -1;
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Plain endpoints, keys in the order of a packed endpoint's toJSON: ip, name, ready, zone, forZones. */
export function readGroup(r: ByteReader): EndpointGroup {
  const service = r.str();
  const ports = readPorts(r);
  const topologies = r.count();
  for (let t = 0; t < topologies; t++) {
    const f = r.u8();
    readZone[t] = (f & ZONE) !== 0 ? r.str() : undefined;
    readFor[t] = (f & FOR_ZONES) !== 0 ? r.strs() : undefined;
  }
  const n = r.count();
  const endpoints = n === 0 ? NONE : new Array<Endpoint>(n);
  for (let i = 0; i < n; i++) (endpoints as Endpoint[])[i] = readEndpoint(r, topologies);
  for (let t = 0; t < topologies; t++) readZone[t] = readFor[t] = undefined;
  return { service, ports, endpoints };
}

function readEndpoint(r: ByteReader, topologies: number): Endpoint {
  const f = r.u8();
  const key: IPKey = (f & TEXT_IP) === 0 ? r.i32() : r.str();
  const ip = ipText(key);
  const t = (f & TOPOLOGY) !== 0 ? r.uint() : -1;
  if (t >= topologies) throw new RangeError("offheap: an endpoint's topology past the group's list");
  const name = (f & LABEL) !== 0 ? r.str() : dashedKey(key);
  const ready = (f & READY) !== 0;
  if (t < 0) return { ip, name, ready };
  const zone = readZone[t];
  const forZones = readFor[t];
  if (forZones === undefined) return { ip, name, ready, zone };
  if (zone === undefined) return { ip, name, ready, forZones };
  return { ip, name, ready, zone, forZones };
}
