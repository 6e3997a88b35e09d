// rrl's limiter in process (src/plugins/rrl/limiter.ts): nanoseconds per UDP reply it is asked about,
// for one client flooding one answer (its account found, the reply dropped), one client's NXDOMAINs
// (the zone's account), and 1000 clients each within its allowance (a network key made per reply).
// `--module` names another limiter.ts to compare (a copy of an older one beside this one's, so its
// imports resolve): A and B alternate in rounds; the median round is printed. Bounded: a fixed count
// of calls per round.
//   node bench/rrl-limiter.ts [--rounds 7] [--module src/plugins/rrl/limiter-before.ts]

import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { RrlOptions } from "../src/plugins/rrl/limiter.ts";
import type { ReplyLimiter } from "../src/setup/block.ts";
import { scanQuery, type Scanned } from "../src/dns/scan.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery, replyTo } from "../src/dns/message.ts";
import { Rcode, Type } from "../src/dns/constants.ts";
import { parseRRText } from "../src/dns/text.ts";
import { parseCorefile } from "../src/corefile/parser.ts";
import { parseRrl } from "../src/plugins/rrl/setup.ts";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "7" }, module: { type: "string" } },
});
const ROUNDS = Number(values.rounds);
const CALLS = 200_000;

// BIND's defaults but slip-ratio 0: a reply over the limit is only dropped (no truncated copy made).
const OPTS: RrlOptions = parseRrl(
  parseCorefile(". {\n rrl {\n  responses-per-second 10\n  slip-ratio 0\n }\n}\n", "Corefile")[0]
    .directives[0],
  ["."],
);
const SOA = parseRRText("example.org. 60 IN SOA ns.example.org. h.example.org. 1 1 1 1 60");

type Make = new (o: RrlOptions) => ReplyLimiter;

function exchange(name: string, rcode: number): { q: Scanned; reply: Buffer } {
  const qm = newQuery(name, Type.A, 1, 7);
  const q = scanQuery(encode(qm));
  if ("drop" in q) throw new Error("unscannable query");
  const r = replyTo(qm, rcode);
  r.qr = true;
  if (rcode === Rcode.NOERROR)
    r.answer.push({ name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "192.0.2.1" } });
  else r.authority.push(SOA);
  return { q, reply: encode(r) };
}

const answer = exchange("www.example.org.", Rcode.NOERROR);
const nx = exchange("nope.example.org.", Rcode.NXDOMAIN);
const clients = Array.from({ length: 1000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.1`);

const scenarios: Record<string, (l: ReplyLimiter, t0: number) => void> = {
  flood: (l, t0) => {
    for (let i = 0; i < CALLS; i++) l.limit(answer.reply, answer.q, "192.0.2.9", t0 + i / 100);
  },
  nxdomain: (l, t0) => {
    for (let i = 0; i < CALLS; i++) l.limit(nx.reply, nx.q, "192.0.2.9", t0 + i / 100);
  },
  // 1000 clients in turn, 1000 s apart in all: each one's account full again at every round.
  clients: (l, t0) => {
    for (let i = 0; i < CALLS; i++) l.limit(answer.reply, answer.q, clients[i % 1000], t0 + i * 5);
  },
};

function nsPerCall(make: Make, run: (l: ReplyLimiter, t0: number) => void, round: number): number {
  const l = new make(OPTS);
  run(l, 0); // warm: compiled, and the accounts made
  const start = process.hrtime.bigint();
  run(l, (round + 1) * 1e7);
  return Number(process.hrtime.bigint() - start) / CALLS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const loaded = async (path: string) =>
  ((await import(pathToFileURL(resolve(path)).href)) as { ResponseLimiter: Make }).ResponseLimiter;
const a = await loaded("src/plugins/rrl/limiter.ts");
const b = values.module === undefined ? undefined : await loaded(values.module);
for (const [name, run] of Object.entries(scenarios)) {
  const times: { a: number[]; b: number[] } = { a: [], b: [] };
  for (let r = 0; r < ROUNDS; r++) {
    times.a.push(nsPerCall(a, run, r));
    if (b) times.b.push(nsPerCall(b, run, r));
  }
  const line = `${name.padEnd(9)} this ${median(times.a).toFixed(1)} ns/reply`;
  console.log(b ? `${line}   ${values.module} ${median(times.b).toFixed(1)} ns/reply` : line);
}
