// The dnstap plugin's own work per query, in process: CPU time of Tap.client (both messages of one
// answered query, encoded and queued) for a query of 41 and a reply of 57 octets, with and without
// `full`, written to Debian's real receiver (`dnstap -u SOCKET -w /dev/null`). Alternating rounds.
//   node bench/dnstap-tap.ts      (BENCH_QUERIES 200000, BENCH_ROUNDS 5)

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { FrameStream } from "../src/plugins/dnstap/frame-stream.ts";
import { Tap } from "../src/plugins/dnstap/tap.ts";
import { envelopeHead } from "../src/plugins/dnstap/protobuf.ts";
import type { QueryDone } from "../src/metrics/query-done.ts";

const queries = Number(process.env.BENCH_QUERIES ?? 200_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), "clusterdns-bench-tap-"));
const socket = join(dir, "tap.sock");
const receiver = spawn("dnstap", ["-u", socket, "-w", "/dev/null"], { stdio: "ignore" });
await sleep(500);

const done: QueryDone = {
  server: "dns://:53",
  zone: "example.org.",
  proto: "udp",
  remoteAddress: "10.244.1.17",
  remotePort: 40123,
  localAddress: "10.96.0.10",
  localPort: 53,
  id: 4242,
  qname: "www.example.org.",
  nameWire: new Uint8Array([3, 119, 119, 119, 7, 101, 120, 97, 109, 112, 108, 101, 3, 111, 114, 103, 0]),
  qtype: 1,
  qclass: 1,
  size: 41,
  do: false,
  bufsize: 1232,
  rcode: 0,
  rflags: "qr,aa,rd",
  rsize: 57,
  duration: 0.00002,
  micros: 20,
  cached: true,
  plugin: "file",
  queryBytes: Buffer.alloc(41, 1),
  replyBytes: Buffer.alloc(57, 2),
  replyAt: 0,
  replyLength: 57,
};

const log = pino({ level: "silent" });
const taps = [false, true].map((full) => {
  const stream = new FrameStream({
    endpoint: { kind: "unix", path: socket },
    maxFrames: 1e9,
    maxOctets: 1 << 30,
    socketOctets: 64 << 20,
    log,
  });
  stream.start();
  return {
    full,
    stream,
    tap: new Tap(stream, { head: envelopeHead("dns-1", "clusterdns-0.1.0", undefined), full, types: ~0 }),
  };
});
while (!taps.every((t) => t.stream.connected)) await sleep(50);

const results = new Map<boolean, number[]>([
  [false, []],
  [true, []],
]);
for (let r = 0; r < rounds; r++) {
  for (const t of taps) {
    const before = process.cpuUsage();
    // In batches of 1,000 queries per turn, as a busy server's turns are.
    for (let i = 0; i < queries; i += 1000) {
      for (let j = 0; j < 1000; j++) t.tap.client(done);
      await new Promise((r) => setImmediate(r));
    }
    const used = process.cpuUsage(before);
    const ns = ((used.user + used.system) * 1000) / queries;
    results.get(t.full)!.push(ns);
    console.log(
      `round ${r + 1} full=${t.full}: ${ns.toFixed(0)} ns CPU per query (2 messages), dropped ${t.stream.stats.dropped}`,
    );
    while (t.stream.stats.sent < (r + 1) * queries * 2) await sleep(20);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `median: ${median(results.get(false)!).toFixed(0)} ns without full, ${median(results.get(true)!).toFixed(0)} ns with full`,
);
for (const t of taps) await t.stream.close();
receiver.kill("SIGTERM");
rmSync(dir, { recursive: true, force: true });
