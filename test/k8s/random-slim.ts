// Random values of the store's slim types (src/plugins/kubernetes/model/slim-types.ts), keys in the
// order slim.ts writes them and optional fields absent when unset, from a seeded generator (rng.ts)
// so a failure replays. For the codecs' round-trip tests.

import type {
  Endpoint,
  EndpointGroup,
  PodRef,
  Service,
  SlimPod,
  SvcPort,
} from "../../src/plugins/kubernetes/model/slim-types.ts";

type Next = () => number;

const int = (next: Next, n: number) => Math.floor(next() * n);
const pick = <T>(next: Next, list: readonly T[]): T => list[int(next, list.length)];
const listOf = <T>(next: Next, max: number, make: (next: Next) => T): T[] =>
  Array.from({ length: int(next, max + 1) }, () => make(next));

const ALPHABET = ["a", "z", "0", "9", "-", ".", "é", "日", "\u{1F600}", "ß"];

/** Short text, mostly ASCII, sometimes empty, sometimes 2- to 4-byte UTF-8, now and then 200 long. */
export function randomText(next: Next): string {
  const n = next() < 0.05 ? 200 : int(next, 12);
  let s = "";
  for (let i = 0; i < n; i++)
    s += next() < 0.8 ? String.fromCharCode(97 + int(next, 26)) : pick(next, ALPHABET);
  return s;
}

/** An IPv4 address across the whole range, an IPv6 one, or (rarely) text that is neither. */
export function randomAddress(next: Next): string {
  const r = next();
  if (r < 0.6)
    return [0, 0, 0, 0].map(() => String(pick(next, [0, 1, 10, 127, 128, 255, int(next, 256)]))).join(".");
  if (r < 0.95) return `fd00:${int(next, 0x10000).toString(16)}::${int(next, 0x10000).toString(16)}`;
  return pick(next, ["lb.example.net.", "01.2.3.4", "1.2.3", ""]);
}

function randomPort(next: Next): SvcPort {
  const proto = pick(next, ["tcp", "tcp", "udp", "sctp", "dccp"]);
  const port = pick(next, [0, 53, 80, 443, 65535, 2 ** 31, int(next, 2 ** 31)]);
  return { name: next() < 0.3 ? "" : randomText(next), proto, port };
}

export function randomService(next: Next): Service {
  const name = randomText(next);
  const ns = randomText(next);
  const type = pick(next, ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName", "Other"]);
  const ports = listOf(next, 3, randomPort);
  const publishNotReadyAddresses = next() < 0.2;
  const clusterIPs = listOf(next, 2, randomAddress);
  const headless = next() < 0.2;
  const s: Service = { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless };
  const externalName = next() < 0.2 ? randomText(next) : undefined;
  const external = next() < 0.2 ? listOf(next, 3, randomAddress) : undefined;
  if (externalName !== undefined && external !== undefined) return { ...s, externalName, external };
  if (externalName !== undefined) return { ...s, externalName };
  if (external !== undefined) return { ...s, external };
  return s;
}

const ZONES = ["europe-west1-b", "europe-west1-c", "us-east-1a", "zöne"];

function randomEndpoint(next: Next): Endpoint {
  const ip = randomAddress(next);
  const name = next() < 0.7 ? ip.replace(/[.:]/g, "-") : randomText(next);
  const ready = next() < 0.8;
  const zone = next() < 0.5 ? pick(next, ZONES) : undefined;
  const forZones = next() < 0.3 ? listOf(next, 2, (n) => pick(n, ZONES)) : undefined;
  if (zone !== undefined && forZones !== undefined) return { ip, name, ready, zone, forZones };
  if (zone !== undefined) return { ip, name, ready, zone };
  if (forZones !== undefined) return { ip, name, ready, forZones };
  return { ip, name, ready };
}

export function randomGroup(next: Next): EndpointGroup {
  const size = next() < 0.1 ? 60 : 6;
  return {
    service: randomText(next),
    ports: listOf(next, 3, randomPort),
    endpoints: listOf(next, size, randomEndpoint),
  };
}

export function randomPod(next: Next): SlimPod {
  const p = { ns: randomText(next), name: randomText(next), ips: listOf(next, 2, randomAddress) };
  return next() < 0.2 ? { ...p, hostNetwork: true } : p;
}

export function randomPodRefs(next: Next): PodRef[] {
  return listOf(next, 3, (n) => {
    const ref = { ns: randomText(n), name: randomText(n) };
    return n() < 0.3 ? { ...ref, hostNetwork: true as const } : ref;
  });
}
