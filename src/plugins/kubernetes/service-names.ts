// The names below a Service in the cluster zone, written once as a name tree (name-tree.ts):
// records.ts answers a name from it, and footprint.ts lists every name a service has with a signature
// of what it holds, which the store compares before and after each change to tell the answer cache
// exactly which names changed.
//
//   SERVICE.NS.svc               the cluster IPs, or a headless service's endpoints; SRV for every
//                                port (CoreDNS matches an empty port and protocol against all); an
//                                ExternalName's CNAME
//   _PROTO.SERVICE.NS.svc        nothing, when a named port uses PROTO (a parent of the SRV names)
//   _PORT._PROTO.SERVICE.NS.svc  SRV for the named port
//   ENDPOINT.SERVICE.NS.svc      the addresses of the endpoints of that name
//   ZONE.pin._zone.SERVICE...    the addresses of the endpoints in that zone (CoreDNS PR 8388)
//   pin._zone, _zone             nothing, above the zonal names
//
// A name the list cannot hold, because there are as many as there are labels, is marked unlisted:
// its answer must not be cached. A headless service without a published endpoint has no names at all
// (the spec's NXDOMAIN), and neither has any service with `ignore empty_service`.

import type { EndpointGroup, Service, SvcPort } from "./slim-types.ts";
import {
  EMPTY,
  NameTree,
  addTo,
  one,
  under,
  type Holding,
  type Shape,
  type SrvHolding,
} from "./name-tree.ts";

/** The options that decide which names exist. */
export interface NameOptions {
  /** `ignore empty_service`: a service with a cluster IP and no published endpoint does not exist. */
  readonly ignoreEmptyService?: boolean;
}

/** The shapes, for explain.ts to say which one a name has. */
export type ShapeName = "service" | "proto" | "port" | "endpoint" | "zonal" | "zonal-parent";

/** A service with its published endpoints, as the shapes read it. `withSrv`: SRV records are wanted
 * at the service's own name (a query of type SRV or ANY, or the list). */
interface Subject {
  readonly svc: Service;
  readonly groups: readonly EndpointGroup[];
  readonly withSrv: boolean;
}

/** The labels of the zonal names' parent: ZONE.pin._zone.SERVICE.NS.svc. */
export const ZONAL = "pin._zone";

const SHAPES: readonly Shape<Subject, ShapeName>[] = [
  {
    name: "service",
    is: (below) => below.length === 0,
    each(s) {
      const { svc, groups } = s;
      if (svc.externalName !== undefined) return one("", { cname: svc.externalName });
      const addresses = svc.headless ? groups.flatMap((g) => g.endpoints.map((e) => e.ip)) : svc.clusterIPs;
      return one("", s.withSrv ? { addresses, srv: srvOf(s, () => true) } : { addresses });
    },
  },
  {
    name: "zonal-parent",
    is: (below) => below.join(".") === ZONAL || (below.length === 1 && below[0] === "_zone"),
    each(s) {
      const zoned = s.groups.some((g) => g.endpoints.some((e) => e.zone !== undefined));
      return zoned
        ? new Map([
            [ZONAL, EMPTY],
            ["_zone", EMPTY],
          ])
        : new Map();
    },
  },
  {
    name: "zonal",
    is: (below) => below.length === 3 && below[1] === "pin" && below[2] === "_zone",
    each(s, only) {
      const byZone = new Map<string, string[]>();
      for (const g of s.groups)
        for (const e of g.endpoints)
          if (e.zone !== undefined && (only === undefined || e.zone === only[0])) addTo(byZone, e.zone, e.ip);
      const out = new Map<string, Holding>();
      for (const [zone, addresses] of byZone) out.set(`${zone}.${ZONAL}`, { addresses });
      return out;
    },
  },
  {
    name: "proto",
    is: (below) => below.length === 1 && below[0].startsWith("_"),
    each(s) {
      const out = new Map<string, Holding>();
      for (const p of namedPorts(s)) out.set(`_${p.proto}`, EMPTY);
      return out;
    },
  },
  {
    name: "port",
    is: (below) => below.length === 2 && below[0].startsWith("_") && below[1].startsWith("_"),
    each(s, only) {
      const out = new Map<string, Holding>();
      for (const p of namedPorts(s)) {
        const key = `_${p.name}._${p.proto}`;
        if (out.has(key) || (only !== undefined && key !== only.join("."))) continue;
        const srv = srvOf(s, (q) => q.name === p.name && q.proto === p.proto);
        if (srv.length > 0) out.set(key, { srv });
      }
      return out;
    },
  },
  {
    name: "endpoint",
    is: (below) => below.length === 1,
    each(s, only) {
      const byName = new Map<string, string[]>();
      for (const g of s.groups)
        for (const e of g.endpoints)
          if (only === undefined || e.name === only[0]) addTo(byName, e.name, e.ip);
      const out = new Map<string, Holding>();
      for (const [name, addresses] of byName) out.set(name, { addresses });
      return out;
    },
  },
];

/** The names below services, for one set of options: the store lists them, records answers them. */
export class ServiceNames {
  readonly options: NameOptions;
  readonly #tree: NameTree<Subject, ShapeName>;

  constructor(options: NameOptions = {}) {
    this.options = options;
    this.#tree = new NameTree(SHAPES, (s, shape) => {
      if (s.svc.externalName !== undefined) return shape === "service";
      // The spec: a headless service without published endpoints is NXDOMAIN; `ignore empty_service`
      // says the same of the others.
      return s.groups.length > 0 || !(s.svc.headless || options.ignoreEmptyService);
    });
  }

  /** The shape of the name `below` SERVICE.NS.svc, or undefined when no name has it. */
  shapeOf(below: readonly string[]): ShapeName | undefined {
    return this.#tree.shapeOf(below);
  }

  /** What the name `below` the service holds; undefined when it does not exist. `withSrv` asks for
   * the SRV records at the service's own name too. */
  holding(
    svc: Service,
    groups: readonly EndpointGroup[],
    below: readonly string[],
    withSrv: boolean,
  ): Holding | undefined {
    return this.#tree.holding({ svc, groups, withSrv }, below);
  }

  /** Every name the service has, relative to the zone (`_http._tcp.web.default.svc`), with what it
   * holds. */
  list(svc: Service, groups: readonly EndpointGroup[]): Map<string, Holding> {
    return under(this.#tree.list({ svc, groups, withSrv: true }), `${svc.name}.${svc.ns}.svc`);
  }
}

/** The named ports SRV records exist for: the service's own for a cluster IP service, those of its
 * endpoints for a headless one. */
function namedPorts(s: Subject): SvcPort[] {
  const ports = s.svc.headless ? s.groups.flatMap((g) => g.ports) : s.svc.ports;
  return ports.filter((p) => p.name !== "");
}

/** The SRV records of the ports `matches` accepts, one per address behind each: a cluster IP service
 * points at its own name, a headless one at each endpoint's name with the port its slice lists. */
function srvOf(s: Subject, matches: (p: SvcPort) => boolean): SrvHolding[] {
  const out: SrvHolding[] = [];
  if (!s.svc.headless) {
    for (const p of s.svc.ports)
      if (matches(p)) for (const ip of s.svc.clusterIPs) out.push({ port: p.port, ip });
    return out;
  }
  for (const g of s.groups) {
    for (const p of g.ports) {
      if (!matches(p)) continue;
      for (const e of g.endpoints) out.push({ port: p.port, host: e.name, ip: e.ip });
    }
  }
  return out;
}
