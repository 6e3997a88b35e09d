// The names below a Service in the cluster zone, written once as a name tree (name-tree.ts):
// answers/records.ts answers a name from it, and footprint.ts lists every name a service has with a signature
// of what it holds, which the store compares before and after each change to tell the answer cache
// exactly which names changed.
//
//   SERVICE.NS.svc               the cluster IPs, or a headless service's endpoints; SRV for every
//                                port (CoreDNS matches an empty port and protocol against all); an
//                                ExternalName's CNAME
//   _PROTO.SERVICE.NS.svc        nothing, when a named port uses PROTO (a parent of the SRV names)
//   _PORT._PROTO.SERVICE.NS.svc  SRV for the named port
//   ENDPOINT.SERVICE.NS.svc      the addresses of the endpoints of that name
//   ZONE.pin._zone.SERVICE...    with `zonal`, a headless service's endpoints in ZONE (CoreDNS PR 8388;
//                                ZONE may span labels), addresses and SRV for every port
//   ZONE.prefer._zone.SERVICE... the same, or every endpoint when none is in ZONE
//   pin._zone, prefer._zone, _zone  nothing, above the zonal names
//
// A name the list cannot hold, because there are as many as there are labels, is marked unlisted:
// its answer must not be cached. A headless service without a published endpoint has no names at all
// (the spec's NXDOMAIN), and with `ignore empty_service` neither has any other service without one.

import type { EndpointGroup, Service, SvcPort } from "../model/slim-types.ts";
import { EMPTY, NameTree, addTo, one, type Holding, type Shape, type SrvHolding } from "./name-tree.ts";

/** The options that decide which names exist. */
export interface NameOptions {
  /** `ignore empty_service`: a service with a cluster IP and no published endpoint does not exist. */
  readonly ignoreEmptyService?: boolean;
  /** `zonal`: headless services have zonal names. */
  readonly zonal?: boolean;
}

/** The shapes, for answers/explain.ts to say which one a name has. */
export type ShapeName = "service" | "proto" | "port" | "endpoint" | "zonal" | "zonal-parent";

/** A service with its published endpoints, as the shapes read it. `withSrv`: SRV records are wanted
 * at the service's own name (a query of type SRV or ANY, or the list). */
interface Subject {
  readonly svc: Service;
  readonly groups: readonly EndpointGroup[];
  readonly withSrv: boolean;
}

/** The zonal names (CoreDNS PR 8388): ZONE.DIRECTIVE._zone.SERVICE.NS.svc. `pin` holds the endpoints
 * in ZONE; `prefer` those, or every endpoint when none is in ZONE. */
const ZONE_LABEL = "_zone";
const DIRECTIVES = ["pin", "prefer"];
const ZONAL_SHAPES: readonly ShapeName[] = ["zonal", "zonal-parent"];

function isDirective(label: string): boolean {
  return DIRECTIVES.includes(label);
}

const SHAPES: readonly Shape<Subject, ShapeName>[] = [
  {
    name: "service",
    is: (below) => below.length === 0,
    each(s) {
      const { svc } = s;
      if (svc.externalName !== undefined) return one("", { cname: svc.externalName });
      if (svc.headless) return one("", endpointsOf(s));
      const addresses = svc.clusterIPs;
      return one("", s.withSrv ? { addresses, srv: srvOf(s, () => true) } : { addresses });
    },
  },
  {
    name: "zonal-parent",
    is: (below) =>
      below.at(-1) === ZONE_LABEL && (below.length === 1 || (below.length === 2 && isDirective(below[0]))),
    each() {
      return new Map([ZONE_LABEL, ...DIRECTIVES.map((d) => `${d}.${ZONE_LABEL}`)].map((k) => [k, EMPTY]));
    },
  },
  {
    name: "zonal",
    open: true,
    is: (below) => below.length >= 3 && below.at(-1) === ZONE_LABEL && isDirective(below.at(-2)!),
    each(s, only) {
      const out = new Map<string, Holding>();
      const zones = only !== undefined ? [only.slice(0, -2).join(".")] : zonesOf(s.groups);
      for (const zone of zones) {
        const here = inZone(s.groups, zone);
        for (const directive of only !== undefined ? [only.at(-2)!] : DIRECTIVES) {
          // A zone no endpoint is in: pin holds nothing, prefer every endpoint; there are as many such
          // names as labels, so none is listed.
          const listed = here.length > 0;
          const h = endpointsOf({ ...s, groups: listed || directive === "pin" ? here : s.groups });
          out.set(`${zone}.${directive}.${ZONE_LABEL}`, listed ? h : { ...h, unlisted: true });
        }
      }
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
    const shapes = SHAPES.filter((x) => options.zonal || !ZONAL_SHAPES.includes(x.name));
    this.#tree = new NameTree(shapes, (s, shape) => {
      if (s.svc.externalName !== undefined) return shape === "service";
      // Zonal names are a headless service's only: a cluster IP has no zone.
      if (ZONAL_SHAPES.includes(shape) && !s.svc.headless) return false;
      // The spec: a headless service without published endpoints is NXDOMAIN; `ignore empty_service`
      // says the same of the others.
      return s.groups.length > 0 || !(s.svc.headless || options.ignoreEmptyService);
    });
  }

  /** Whether the name `below` SERVICE.NS.svc is of a shape with more names than the list holds: its
   * answer is not cached unless it is listed, NXDOMAIN included. */
  isOpen(below: readonly string[]): boolean {
    return this.#tree.isOpen(below);
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
    return this.#tree.list({ svc, groups, withSrv: true }, `${svc.name}.${svc.ns}.svc`);
  }
}

/** What the subject's endpoints hold together: their addresses, and SRV records for every port. */
function endpointsOf(s: Subject): Holding {
  const addresses = s.groups.flatMap((g) => g.endpoints.map((e) => e.ip));
  return s.withSrv ? { addresses, srv: srvOf(s, () => true) } : { addresses };
}

/** The zones the endpoints are in. */
function zonesOf(groups: readonly EndpointGroup[]): string[] {
  const zones = new Set<string>();
  for (const g of groups) for (const e of g.endpoints) if (e.zone !== undefined) zones.add(e.zone);
  return [...zones];
}

/** The groups cut down to their endpoints in `zone`; those left without one dropped. */
function inZone(groups: readonly EndpointGroup[], zone: string): EndpointGroup[] {
  return groups.flatMap((g) => {
    const endpoints = g.endpoints.filter((e) => e.zone === zone);
    return endpoints.length > 0 ? [{ ...g, endpoints }] : [];
  });
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
