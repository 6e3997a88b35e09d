// A realistic cluster for the benchmark, deterministic from a seed: namespaces, ClusterIP services with
// named ports, headless services (half of them StatefulSets whose endpoints have hostnames), a few
// ExternalName services, and endpoints backed by pod IPs (about 5 per service, 2 pods per service).
// The same data comes out three ways: Kubernetes objects for the test API server (what clusterdns
// reads), an RFC 1035 zone of the same records (what Knot DNS serves), and dnsperf query mixes (the
// hot mix here; the over-capacity and unique-names mixes in bench/mixes.ts, from the names listed here).
//   node bench/cluster-gen.ts --services 10000 --out DIR
// writes objects.json, cluster.local.zone (with the pod records), and one query file per mix.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { rng } from "../test/helpers/rng.ts";
import { endpointSlice, namespace, service } from "../test/k8s/objects.ts";
import { MIXES, mixQueries } from "./mixes.ts";

export interface ClusterOptions {
  services: number;
  seed?: number;
  zone?: string;
  /** Also a headless service `big` in the first namespace with this many ready endpoints, in
   * EndpointSlices of 100 as the EndpointSlice controller cuts them (BIG_HEADLESS names it). */
  bigHeadless?: number;
}

/** The name of the big headless service, relative to the zone. */
export const BIG_HEADLESS = "big.team-0.svc";

export interface Cluster {
  /** Namespaces, Services and EndpointSlices in kube-apiserver's JSON shape. */
  objects: object[];
  /** The same records as an RFC 1035 zone (SOA, NS, A, SRV, CNAME, PTR-free). */
  zone: string;
  /** The A records of the pods' own names (`a-b-c-d.NS.pod`), apart from `zone`: a server with `pods
   * insecure` answers them, but they are not part of the zone it transfers. */
  podRecords: string;
  /** dnsperf lines of the hot mix: "NAME TYPE". */
  queries: string[];
  /** The names of each kind that have records, absolute without the final dot: what other mixes ask. */
  names: ClusterNames;
  counts: { namespaces: number; services: number; endpoints: number; pods: number };
}

export interface ClusterNames {
  /** The cluster's domain, cluster.local. */
  zone: string;
  namespaces: string[];
  /** ClusterIP services. */
  clusterIP: string[];
  /** Headless services with a ready endpoint. */
  headless: string[];
  /** Every ready StatefulSet pod's own name (HOSTNAME.SERVICE.NS.svc). */
  hostnames: string[];
  /** Every named port's SRV name (_PORT._tcp.SERVICE.NS.svc) of a service that has an answer. */
  srv: string[];
  /** Every pod's name (a-b-c-d.NS.pod), NS the namespace of the first service it backs. */
  pods: string[];
}

const PORT_NAMES = ["http", "grpc", "metrics", "https", "redis", "postgres"];
const TTL = 5;

/** The n-th address of 10.96.0.0/12, the default service CIDR. */
const serviceIP = (n: number) => `10.${96 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
/** The n-th pod address of 10.128.0.0/9. */
const podIP = (n: number) => `10.${128 + ((n >> 16) & 127)}.${(n >> 8) & 255}.${n & 255}`;

export function generateCluster(o: ClusterOptions): Cluster {
  const random = rng(o.seed ?? 1);
  const zone = o.zone ?? "cluster.local";
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const nsCount = Math.max(5, Math.round(o.services / 20));
  const namespaces = Array.from({ length: nsCount }, (_, i) => `team-${i}`);
  const objects: object[] = namespaces.map((n) => namespace(n));
  const records: string[] = [];
  const rr = (name: string, type: string, data: string) =>
    records.push(`${name}.${zone}. ${TTL} IN ${type} ${data}`);
  const queries = {
    clusterIP: [] as string[],
    headless: [] as string[],
    hostnames: [] as string[],
    srv: [] as string[],
  };
  const names: ClusterNames = {
    zone,
    namespaces,
    clusterIP: [],
    headless: [],
    hostnames: [],
    srv: [],
    pods: [],
  };
  const podNamespaces: string[] = [];
  let pods = 0;
  let endpoints = 0;

  for (let i = 0; i < o.services; i++) {
    const ns = namespaces[i % nsCount];
    const name = `svc-${i}`;
    const base = `${name}.${ns}.svc`;
    const kind = random();
    if (kind < 0.02) {
      objects.push(service(ns, name, { externalName: `api-${i}.example.com` }));
      rr(base, "CNAME", `api-${i}.example.com.`);
      continue;
    }
    const headless = kind < 0.17;
    const statefulSet = headless && kind < 0.095;
    const portCount = 1 + Math.floor(random() * 3);
    const ports = Array.from({ length: portCount }, (_, p) => ({
      name: PORT_NAMES[(i + p) % PORT_NAMES.length],
      port: 8000 + p,
    }));
    const ip = serviceIP(i + 10);
    const newPod = () => {
      podNamespaces.push(ns);
      return pods++;
    };
    objects.push(service(ns, name, headless ? { headless: true, ports } : { clusterIP: ip, ports }));
    // About 5 endpoints per service on 2 pods' worth of new IPs: pods back several services.
    const n = 1 + Math.floor(random() * 9);
    const used = new Set<number>();
    const eps = Array.from({ length: n }, (_, e) => {
      let podNumber = random() < 0.4 || pods === 0 ? newPod() : Math.floor(random() * pods);
      while (used.has(podNumber)) podNumber = newPod();
      used.add(podNumber);
      const hostname = statefulSet ? `${name}-${e}` : undefined;
      return { ip: podIP(podNumber), hostname, ready: random() > 0.03 };
    });
    endpoints += n;
    objects.push(endpointSlice(ns, name, `${name}-abcde`, eps, { ports }));
    const ready = eps.filter((e) => e.ready);
    if (headless) {
      for (const e of ready) rr(base, "A", e.ip);
      if (statefulSet) for (const e of ready) rr(`${e.hostname}.${base}`, "A", e.ip);
      for (const p of ports) {
        for (const e of ready) {
          const target = e.hostname ? `${e.hostname}.${base}` : `${e.ip.replaceAll(".", "-")}.${base}`;
          rr(
            `_${p.name}._tcp.${base}`,
            "SRV",
            `0 ${Math.floor(100 / ready.length)} ${p.port} ${target}.${zone}.`,
          );
        }
      }
      for (const e of ready) if (!e.hostname) rr(`${e.ip.replaceAll(".", "-")}.${base}`, "A", e.ip);
      // SRV at the service's own name: every port of every ready endpoint, weighed over all of them.
      for (const p of ports) {
        for (const e of ready) {
          const target = e.hostname ? `${e.hostname}.${base}` : `${e.ip.replaceAll(".", "-")}.${base}`;
          const weight = Math.max(1, Math.floor(100 / (ready.length * ports.length)));
          rr(base, "SRV", `0 ${weight} ${p.port} ${target}.${zone}.`);
        }
      }
      queries.headless.push(`${base}.${zone} A`);
      if (statefulSet && ready.length > 0) queries.hostnames.push(`${ready[0].hostname}.${base}.${zone} A`);
      if (ready.length > 0) {
        names.headless.push(`${base}.${zone}`);
        for (const p of ports) names.srv.push(`_${p.name}._tcp.${base}.${zone}`);
      }
      if (statefulSet) for (const e of ready) names.hostnames.push(`${e.hostname}.${base}.${zone}`);
    } else {
      rr(base, "A", ip);
      for (const p of ports) rr(`_${p.name}._tcp.${base}`, "SRV", `0 100 ${p.port} ${base}.${zone}.`);
      // SRV at the service's own name: every port, weighed over all of them.
      for (const p of ports)
        rr(base, "SRV", `0 ${Math.floor(100 / ports.length)} ${p.port} ${base}.${zone}.`);
      queries.clusterIP.push(`${base}.${zone} A`);
      names.clusterIP.push(`${base}.${zone}`);
      for (const p of ports) names.srv.push(`_${p.name}._tcp.${base}.${zone}`);
    }
    queries.srv.push(`_${ports[0].name}._tcp.${base}.${zone} SRV`);
  }

  if (o.bigHeadless) {
    const [name, ns] = BIG_HEADLESS.split(".");
    const ports = [{ name: "http", port: 8080 }];
    objects.push(service(ns, name, { headless: true, ports }));
    // Outside the pods' 10.128.0.0/9: 172.16.0.0/12.
    const ips = Array.from(
      { length: o.bigHeadless },
      (_, i) => `172.${16 + ((i + 1) >> 16)}.${((i + 1) >> 8) & 255}.${(i + 1) & 255}`,
    );
    for (let s = 0; s * 100 < ips.length; s++) {
      objects.push(endpointSlice(ns, name, `${name}-${s}`, ips.slice(s * 100, s * 100 + 100), { ports }));
    }
    for (const ip of ips) rr(BIG_HEADLESS, "A", ip);
    endpoints += ips.length;
  }

  const mix: string[] = [];
  const total = Math.min(100_000, Math.max(1000, o.services * 2));
  for (let q = 0; q < total; q++) {
    const r = random();
    // ClusterIP A 45%, headless A 15%, StatefulSet pod names 10%, SRV 10%, AAAA NODATA 10%,
    // NXDOMAIN search-list expansions 10% (an external name tried under the pod's namespace).
    if (r < 0.45 && queries.clusterIP.length > 0) mix.push(pick(queries.clusterIP));
    else if (r < 0.6 && queries.headless.length > 0) mix.push(pick(queries.headless));
    else if (r < 0.7 && queries.hostnames.length > 0) mix.push(pick(queries.hostnames));
    else if (r < 0.8) mix.push(pick(queries.srv));
    else if (r < 0.9 && queries.clusterIP.length > 0)
      mix.push(pick(queries.clusterIP).replace(/ A$/, " AAAA"));
    else mix.push(`api-${q}.example.com.${pick(namespaces)}.svc.${zone} A`);
  }

  const podRecords: string[] = [];
  for (let n = 0; n < pods; n++) {
    const name = `${podIP(n).replaceAll(".", "-")}.${podNamespaces[n]}.pod`;
    podRecords.push(`${name}.${zone}. ${TTL} IN A ${podIP(n)}`);
    names.pods.push(`${name}.${zone}`);
  }

  const head = [
    `$ORIGIN ${zone}.`,
    `@ 30 IN SOA ns.dns.${zone}. hostmaster.${zone}. 1 7200 1800 86400 ${TTL}`,
    `@ 30 IN NS ns.dns.${zone}.`,
    `ns.dns 30 IN A 10.96.0.10`,
  ];
  return {
    objects,
    zone: [...head, ...records, ""].join("\n"),
    podRecords: [...podRecords, ""].join("\n"),
    queries: mix,
    names,
    counts: { namespaces: nsCount, services: o.services, endpoints, pods },
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      services: { type: "string", default: "10000" },
      seed: { type: "string", default: "1" },
      out: { type: "string" },
    },
  });
  if (!values.out) throw new Error("usage: node bench/cluster-gen.ts --services N [--seed S] --out DIR");
  const c = generateCluster({ services: Number(values.services), seed: Number(values.seed) });
  mkdirSync(values.out, { recursive: true });
  writeFileSync(
    join(values.out, "objects.json"),
    JSON.stringify({ kind: "List", apiVersion: "v1", items: c.objects }),
  );
  writeFileSync(join(values.out, "cluster.local.zone"), c.zone + c.podRecords);
  for (const mix of MIXES) {
    writeFileSync(join(values.out, `queries-${mix}.txt`), mixQueries(c, mix).join("\n") + "\n");
  }
  console.log(JSON.stringify(c.counts));
}
