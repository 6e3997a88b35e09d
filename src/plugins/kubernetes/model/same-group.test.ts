import { test } from "node:test";
import assert from "node:assert/strict";
import { sameGroup } from "./same-group.ts";
import { sameJSON } from "./object-key.ts";
import type { Endpoint, EndpointGroup } from "./slim-types.ts";

// Small random groups, so that pairs often differ in one field only: sameGroup must answer as
// serialising both (what the store compared before) does.
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function group(r: () => number): EndpointGroup {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const endpoints: Endpoint[] = Array.from({ length: Math.floor(r() * 3) }, () => {
    const e: { ip: string; name: string; ready: boolean; zone?: string; forZones?: string[] } = {
      ip: pick(["10.0.0.1", "10.0.0.2"]),
      name: pick(["a", "b"]),
      ready: r() < 0.5,
    };
    if (r() < 0.3) e.zone = pick(["z1", "z2"]);
    if (r() < 0.3) e.forZones = r() < 0.5 ? [pick(["z1", "z2"])] : ["z1", "z2"];
    return e;
  });
  const ports = Array.from({ length: Math.floor(r() * 2) }, () => ({
    name: pick(["", "http"]),
    proto: pick(["tcp", "udp"]),
    port: pick([80, 53]),
  }));
  return { service: pick(["ns/a", "ns/b"]), ports, endpoints };
}

test("sameGroup answers as comparing the groups serialised", () => {
  const r = rng(7);
  let equal = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = group(r);
    const b = r() < 0.3 ? (JSON.parse(JSON.stringify(a)) as EndpointGroup) : group(r);
    const same = sameJSON(a, b);
    if (same) equal++;
    assert.equal(sameGroup(a, b), same, JSON.stringify([a, b]));
  }
  // Both answers were met often.
  assert.ok(equal > 1000 && equal < 19_000, `${equal} equal pairs`);
});

test("sameGroup tells an absent topology from an empty one, as serialising does", () => {
  const e = { ip: "10.0.0.1", name: "a", ready: true };
  const g = (x: Endpoint): EndpointGroup => ({ service: "ns/a", ports: [], endpoints: [x] });
  assert.equal(sameGroup(g(e), g({ ...e, forZones: [] })), false);
  assert.equal(sameGroup(g(e), g({ ...e, zone: undefined })), true);
});
