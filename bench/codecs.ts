// The kubernetes store's value codecs (src/plugins/kubernetes/store/codecs.ts) against the JSON text
// they replaced: nanoseconds per write, per read, and per write + read, and bytes per value, for a
// ClusterIP service (one address, two ports) and EndpointSlices of 3 and 100 endpoints as the Slimmer
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
const cases = [
  {
    name: "service",
    value: slim.service(
      service("default", "web", {
        clusterIP: "10.96.12.34",
        ports: [
          { name: "http", port: 80 },
          { name: "https", port: 443 },
        ],
      }),
    )!,
    calls: 200_000,
  },
  { name: "group-3", value: slice(3), calls: 100_000 },
  { name: "group-100", value: slice(100), calls: 5_000 },
];

const w = new ByteWriter();
const r = new ByteReader();
let sink = 0;

/** Nanoseconds per call of `fn` over `n` calls, after a warm-up of n/10. */
function nsPer(n: number, fn: () => void): number {
  for (let i = 0; i < n / 10; i++) fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t) / n;
}

function measure(codec: Codec<unknown>, value: unknown, calls: number) {
  w.reset();
  codec.write(w, value);
  const bytes = Buffer.from(w.bytes);
  const write = nsPer(calls, () => {
    w.reset();
    codec.write(w, value);
  });
  const read = nsPer(calls, () => {
    sink ^= codec.read(r.at(bytes, 0)) === undefined ? 1 : 0;
  });
  const both = nsPer(calls, () => {
    w.reset();
    codec.write(w, value);
    sink ^= codec.read(r.at(w.bytes as Buffer, 0)) === undefined ? 1 : 0;
  });
  return { bytes: bytes.length, write, read, both };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

for (const c of cases) {
  const codec = (c.name === "service" ? serviceCodec : groupCodec) as Codec<unknown>;
  const runs: Record<"json" | "binary", ReturnType<typeof measure>[]> = { json: [], binary: [] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.json.push(measure(json, c.value, c.calls));
    runs.binary.push(measure(codec, c.value, c.calls));
  }
  for (const [form, list] of Object.entries(runs)) {
    const ns = (k: "write" | "read" | "both") => Math.round(median(list.map((m) => m[k])));
    console.log(
      JSON.stringify({
        value: c.name,
        form,
        bytes: list[0].bytes,
        writeNs: ns("write"),
        readNs: ns("read"),
        bothNs: ns("both"),
      }),
    );
  }
}
if (sink === 42) console.log("");
