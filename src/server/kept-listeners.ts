// A reload keeps the listeners per (transport, configured port, address), not per listener group: a
// group is every block of one port and bind list, so a `bind` edit (an address added or removed, a
// zone moved to another block) makes a new group around addresses the old groups listen on. Binding
// such an address again beside the old socket fails without SO_REUSEPORT; the new group takes the old
// listeners of each address over instead, binds only its new addresses, and the old groups close only
// what no new group took.

import type { Transport } from "../corefile/types.ts";
import type { TlsSettings } from "../setup/block.ts";
import type { Pipeline } from "./pipeline.ts";
import type { UdpListener } from "./udp.ts";
import type { TcpListener, TcpOptions } from "./tcp.ts";
import type { DohListener } from "./doh.ts";
import type { GrpcListener } from "./grpc.ts";

/** What of a listener group the take-over reads and moves. */
export interface ListenerGroup {
  transport: Transport;
  /** The port as configured: 0 picks one when the group first listens. */
  configuredPort: number;
  /** The port it listens on. */
  port: number;
  bind: readonly string[];
  pipeline: Pipeline;
  tcpOptions: TcpOptions;
  tls?: TlsSettings;
  udp: UdpListener[];
  tcp: TcpListener[];
  doh: (DohListener | GrpcListener)[];
  /** Addresses whose UDP sockets stepped aside (udp-aside.ts): still the group's. */
  aside?: string[];
}

/** The addresses a new group takes over, each with the old group that listens there, and the port
 * they listen on (what the group's other addresses bind). */
export interface Kept {
  port: number;
  from: Map<string, ListenerGroup>;
}

/** Which addresses of each new group an old group listens on, of the same transport and configured
 * port. Each old address goes to one new group; with port 0, a group keeps the addresses of one
 * port only (its addresses share one), and binds the rest anew on it. */
export function keptListeners(
  old: Iterable<ListenerGroup>,
  next: Iterable<ListenerGroup>,
): Map<ListenerGroup, Kept> {
  const at = new Map<string, ListenerGroup>();
  for (const g of old)
    for (const address of g.bind) {
      const key = `${g.transport}|${g.configuredPort}|${address}`;
      if (!at.has(key) && listensAt(g, address)) at.set(key, g);
    }
  const kept = new Map<ListenerGroup, Kept>();
  for (const g of next)
    for (const address of g.bind) {
      const key = `${g.transport}|${g.configuredPort}|${address}`;
      const from = at.get(key);
      const k = kept.get(g);
      if (from === undefined || (k !== undefined && k.port !== from.port)) continue;
      at.delete(key);
      if (k === undefined) kept.set(g, { port: from.port, from: new Map([[address, from]]) });
      else k.from.set(address, from);
    }
  return kept;
}

function listensAt(g: ListenerGroup, address: string): boolean {
  const here = (l: { address: string }) => l.address === address;
  return g.udp.some(here) || g.tcp.some(here) || g.doh.some(here) || (g.aside?.includes(address) ?? false);
}

/** Moves the kept listeners from the old groups into `g`, serving its pipeline from now on. */
export function takeKept(g: ListenerGroup, kept: Kept): void {
  for (const [address, from] of kept.from) {
    const here = (l: { address: string }) => l.address === address;
    for (const l of takeOut(from.udp, here)) {
      l.use(g.pipeline);
      g.udp.push(l);
    }
    for (const l of takeOut(from.tcp, here)) {
      l.use(g.pipeline, g.tcpOptions, g.tls);
      g.tcp.push(l);
    }
    for (const l of takeOut(from.doh, here)) {
      l.use(g.pipeline, g.tcpOptions, g.tls);
      g.doh.push(l);
    }
    if (from.aside?.includes(address)) {
      const rest = from.aside.filter((a) => a !== address);
      from.aside = rest.length > 0 ? rest : undefined;
      (g.aside ??= []).push(address);
    }
  }
}

/** Removes the items that match from `list`, and returns them. */
function takeOut<T>(list: T[], match: (item: T) => boolean): T[] {
  const out = list.filter(match);
  const rest = list.filter((item) => !match(item));
  list.length = 0;
  list.push(...rest);
  return out;
}
