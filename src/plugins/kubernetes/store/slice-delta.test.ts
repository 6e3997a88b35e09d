import { test } from "node:test";
import assert from "node:assert/strict";
import { sliceDelta } from "./slice-delta.ts";
import { changedNames, footprint, published, type Footprint } from "./footprint.ts";
import { ServiceNames } from "../names/service-names.ts";
import type { Endpoint, EndpointGroup, Service } from "../model/slim-types.ts";

// The cut-down footprints must report every change the whole slice's footprints report: each name
// whose answer changed, and each address the address index would drop or add. Random edits in place
// (fields changed, endpoints inserted and removed), on headless and cluster IP services, with zones,
// shared hostnames and shared addresses, so that the sharing rules are exercised.

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function endpoint(r: () => number): Endpoint {
  const e: { ip: string; name: string; ready: boolean; zone?: string } = {
    ip: `10.0.0.${1 + Math.floor(r() * 6)}`,
    name: ["web-0", "web-1", "web-2", "10-0-0-9"][Math.floor(r() * 4)],
    ready: r() < 0.7,
  };
  if (r() < 0.4) e.zone = r() < 0.5 ? "a" : "b";
  return e;
}

function edit(r: () => number, list: readonly Endpoint[]): Endpoint[] {
  const out = [...list];
  const edits = 1 + Math.floor(r() * 2);
  for (let k = 0; k < edits; k++) {
    const at = Math.floor(r() * (out.length + 1));
    const what = r();
    if (what < 0.4 && at < out.length) out[at] = { ...out[at], ready: !out[at].ready };
    else if (what < 0.6 && at < out.length) out[at] = endpoint(r);
    else if (what < 0.8 || out.length === 0) out.splice(at, 0, endpoint(r));
    else out.splice(Math.min(at, out.length - 1), 1);
  }
  return out;
}

/** Names whose answers differ, and the addresses the index would unindex or index. */
function changes(before: Footprint, after: Footprint) {
  const names = new Set(changedNames(before, after));
  const dropped = [...before.ips.keys()].filter((ip) => !after.ips.has(ip));
  const added = [...after.ips.keys()].filter((ip) => !before.ips.has(ip));
  // PTR targets as sets: an order that alone changed changes no answer's records.
  const set = (t: readonly string[] | undefined) => (t === undefined ? "-" : [...t].sort().join());
  const targets = [...before.ips].filter(([ip, t]) => set(after.ips.get(ip)) !== set(t)).map(([ip]) => ip);
  return { names, dropped, added, targets: new Set(targets) };
}

for (const headless of [true, false]) {
  test(`a slice's cut-down footprints report what the whole ones do (${headless ? "headless" : "cluster IP"})`, () => {
    const r = rng(headless ? 11 : 12);
    const names = new ServiceNames({ zonal: true });
    const svc: Service = {
      name: "web",
      ns: "shop",
      type: "ClusterIP",
      clusterIPs: headless ? [] : ["10.96.0.10"],
      headless,
      ports: [{ name: "http", proto: "tcp", port: 80 }],
      publishNotReadyAddresses: false,
    };
    let cut = 0;
    for (let i = 0; i < 5000; i++) {
      const prev: EndpointGroup = {
        service: "shop/web",
        ports: [{ name: "http", proto: "tcp", port: 8080 }],
        endpoints: Array.from({ length: Math.floor(r() * 6) }, () => endpoint(r)),
      };
      const next: EndpointGroup = { ...prev, endpoints: edit(r, prev.endpoints) };
      const a = published(svc, prev);
      const b = published(svc, next);
      const whole = changes(footprint(names, svc, a), footprint(names, svc, b));
      const [x, y] = sliceDelta(a, b);
      if ((x[0]?.endpoints.length ?? 0) < (a[0]?.endpoints.length ?? 0)) cut++;
      const part = changes(footprint(names, svc, x), footprint(names, svc, y));
      const context = JSON.stringify({ prev: a, next: b });
      for (const n of whole.names) assert.ok(part.names.has(n), `${n} not reported: ${context}`);
      assert.deepEqual(part.dropped.sort(), whole.dropped.sort(), `dropped: ${context}`);
      assert.deepEqual(part.added.sort(), whole.added.sort(), `added: ${context}`);
      for (const ip of whole.targets)
        assert.ok(part.targets.has(ip), `PTR of ${ip} not reported: ${context}`);
    }
    // The cut did happen, often.
    assert.ok(cut > 1000, `${cut} cut down`);
  });
}
