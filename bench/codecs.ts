// The kubernetes store's value codecs (src/plugins/kubernetes/store/codecs.ts) against the JSON text
// they replaced: nanoseconds per write, per read, and per write + read, and bytes per value, for a
// ClusterIP service (one address, two ports; one, and 10k distinct) and EndpointSlices of 3 and 100 endpoints as the Slimmer
// makes them (packed endpoints, a zone each, pod-backed so named by their dashed address). A and B
// alternate in rounds; the median round is printed. Bounded: a fixed count of calls per round.
//   node bench/codecs.ts [--rounds 5]

import { parseArgs } from "node:util";
import { ByteReader, ByteWriter } from "../src/offheap/bytes.ts";
import type { Codec } from "../src/offheap/table.ts";
import { groupCodec, serviceCodec } from "../src/plugins/kubernetes/store/codecs.ts";
import { Slimmer } from "../src/plugins/kubernetes/store/slim.ts";
import { endpointSlice, service } from "../test/k8s/objects.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(values.rounds);

/** The placeholder the binary codecs replaced: each value as its JSON text. */
const json: Codec<unknown> = {
  write: (w, v) => w.str(JSON.stringify(v)),
  read: (r) => JSON.parse(r.str()) as unknown,
};

const slim = new Slimmer();
const zones = ["europe-west1-b", "europe-west1-c", "europe-west1-d"];
const slice = (n: number) =>
  slim.slice(
    endpointSlice(
      "default",
      `web-${n}`,
      undefined,
      Array.from({ length: n }, (_, i) => ({
        ip: `10.244.${i >> 8}.${i & 255}`,
        zone: zones[i % 3],
        pod: `web-${n}-${i}`,
      })),
      { ports: [{ name: "http", port: 80 }] },
    ),
  )!;
const webService = (i: number) =>
  slim.service(
    service(`team-${i % 500}`, `web-${i}`, {
      clusterIP: `10.96.${i >> 8}.${i & 255}`,
      ports: [
        { name: "http", port: 80 },
        { name: "https", port: 443 },
      ],
    }),
  )!;
/** Each case's values are read round-robin: one value over and over stays in the CPU's caches, as a
 * hot service would; 10k distinct ones (500 namespaces) are what misses on a big cluster look like. */
const cases = [
  { name: "service", values: [webService(1234)], calls: 200_000 },
  { name: "service-10k", values: Array.from({ length: 10_000 }, (_, i) => webService(i)), calls: 200_000 },
  { name: "group-3", values: [slice(3)], calls: 100_000 },
  { name: "group-100", values: [slice(100)], calls: 5_000 },
];

const w = new ByteWriter();
const r = new ByteReader();
let sink = 0;

/** Nanoseconds per call of `fn` over `n` calls, after a warm-up of n/10. */
function nsPer(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < n / 10; i++) fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t) / n;
}

function measure(codec: Codec<unknown>, values: unknown[], calls: number) {
  const encoded = values.map((v) => {
    w.reset();
    codec.write(w, v);
    return Buffer.from(w.bytes);
  });
  // A stride prime to the count: neighbours in memory are not read one after the other.
  const at = (i: number) => (i * 4099) % values.length;
  const write = nsPer(calls, (i) => {
    w.reset();
    codec.write(w, values[at(i)]);
  });
  const read = nsPer(calls, (i) => {
    sink ^= codec.read(r.at(encoded[at(i)], 0)) === undefined ? 1 : 0;
  });
  const both = nsPer(calls, (i) => {
    w.reset();
    codec.write(w, values[at(i)]);
    sink ^= codec.read(r.at(w.bytes as Buffer, 0)) === undefined ? 1 : 0;
  });
  const bytes = encoded.reduce((sum, b) => sum + b.length, 0) / encoded.length;
  return { bytes, write, read, both };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

for (const c of cases) {
  const codec = (c.name.startsWith("service") ? serviceCodec : groupCodec) as Codec<unknown>;
  const runs: Record<"json" | "binary", ReturnType<typeof measure>[]> = { json: [], binary: [] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.json.push(measure(json, c.values, c.calls));
    runs.binary.push(measure(codec, c.values, c.calls));
  }
  for (const [form, list] of Object.entries(runs)) {
    const ns = (k: "write" | "read" | "both") => Math.round(median(list.map((m) => m[k])));
    console.log(
      JSON.stringify({
        value: c.name,
        form,
        bytes: Math.round(list[0].bytes),
        writeNs: ns("write"),
        readNs: ns("read"),
        bothNs: ns("both"),
      }),
    );
  }
}
if (sink === 42) console.log("");
