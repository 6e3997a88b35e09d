// The resolver model against the real glibc: inside a network namespace whose resolv.conf is a pod's,
// `getent ahosts` and `getent hosts` ask a recording DNS server; the model asks a second copy of that
// server (same table) outside the namespace. For every name, the queries glibc sent must equal the
// queries the model predicts (and sends), and getent's output must equal the model's result.
// Needs root and iproute2: without them this test fails, it does not skip.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { startRecorder, type Recorder, type Table } from "./helpers/recording-dns-server.ts";
import { parseResolvConf } from "../src/resolver/resolv-conf.ts";
import { resolve, type Mode, type Trace } from "../src/resolver/resolve.ts";

const POD = `nameserver 127.0.0.1
search default.svc.cluster.local svc.cluster.local cluster.local
options ndots:5
`;
const LONG = `${"x".repeat(62)}.${"x".repeat(62)}.${"x".repeat(62)}.${"y".repeat(61)}`;

const TABLE: Table = {
  "web.default.svc.cluster.local.": { A: ["10.0.0.1"], AAAA: ["fd00::1"] },
  "db.other.svc.cluster.local.": { A: ["10.0.1.1"] },
  "a.b.c.d.e.f.": { A: ["10.0.2.1"], AAAA: ["fd00::21"] },
  "x.y.z.w.v.u.default.svc.cluster.local.": { A: ["10.0.2.2"] },
  "example.com.": { A: ["192.0.2.10"] },
  "v4only.default.svc.cluster.local.": { A: ["10.0.3.1"] },
  "nodata.default.svc.cluster.local.": {},
  "broken.default.svc.cluster.local.": { rcode: "SERVFAIL" },
  "broken.": { A: ["192.0.2.20"] },
  "half.default.svc.cluster.local.": { AAAA: ["fd00::41"], rcode: { A: "SERVFAIL" } },
  "refused.default.svc.cluster.local.": { rcode: "REFUSED" },
  "refused.svc.cluster.local.": { A: ["10.0.4.1"] },
  "alias.default.svc.cluster.local.": { CNAME: "web.default.svc.cluster.local." },
  "ext.default.svc.cluster.local.": { CNAME: "nowhere.example." },
  "mute.default.svc.cluster.local.": { drop: ["*"] },
  "mute6.default.svc.cluster.local.": { A: ["10.0.5.1"], drop: ["AAAA"] },
  "big.default.svc.cluster.local.": { A: ["10.0.6.1", "10.0.6.2"], AAAA: ["fd00::61"], truncate: true },
  "lame.default.svc.cluster.local.": { noAuthority: true },
  "lame.": { A: ["192.0.2.30"] },
  "_http._tcp.web.default.svc.cluster.local.": { A: ["10.0.7.1"] },
  "0x7f.1.": { A: ["192.0.2.40"] },
};
const QUICK = POD.replace("ndots:5", "ndots:5 timeout:1 attempts:1");

interface Case {
  name: string;
  /** resolv.conf text, default POD. */
  conf?: string;
  env?: { LOCALDOMAIN?: string; RES_OPTIONS?: string };
}

const CASES: Case[] = [
  { name: "web" }, // short name, first search domain
  { name: "db.other" }, // partial name, second search domain
  { name: "web.default.svc.cluster.local." }, // absolute
  { name: "nothere.default.svc.cluster.local." }, // absolute, missing: no search
  { name: "a.b.c.d.e.f" }, // 5 dots: as is first, found
  { name: "x.y.z.w.v.u" }, // 5 dots: as is first, then the search list
  { name: "example.com" }, // exists only as is: after the whole search list
  { name: "nothere" }, // nowhere
  { name: "v4only" }, // NODATA for AAAA
  { name: "nodata" }, // NODATA for both: the walk goes on, EAI_NODATA
  { name: "broken" }, // SERVFAIL: sent again (attempts), then the walk goes on
  { name: "half" }, // A SERVFAIL, AAAA answered
  { name: "refused" }, // REFUSED ends the search list: svc.cluster.local is never asked
  { name: "alias" }, // CNAME to a name with addresses
  { name: "ext" }, // CNAME to a name with none: the walk stops there
  { name: "big" }, // truncated over UDP: both queries again over TCP
  { name: "lame" }, // an empty reply without AA or RA is a referral: next server, then the walk ends
  { name: "A.B.c.d.e.F" }, // case is kept on the wire
  // Not a host name (res_hnok): nothing is sent, EAI_NONAME / HOST_NOT_FOUND.
  { name: "-web" }, // a leading hyphen
  { name: "a*b" },
  { name: "a\\.b" }, // an escaped dot: a label with a "." in it
  { name: "web-" }, // a hyphen elsewhere is fine
  { name: "_http._tcp.web" }, // and so are underscores
  // Numbers: getaddrinfo reads inet_aton's forms; gethostbyname2 only digits and dots, and sends
  // nothing for digits and dots that are no address.
  { name: "0x7f.1" },
  { name: "1.2.3.4.5" },
  // The same lookups under other options.
  { name: "half", conf: POD.replace("ndots:5", "ndots:5 single-request") },
  { name: "broken", conf: POD.replace("ndots:5", "ndots:1 attempts:1 no-tld-query") },
  { name: "nothere", conf: POD.replace("ndots:5", "ndots:1 no-tld-query") },
  { name: "web", conf: POD.replace("ndots:5", "ndots:0") },
  { name: "example.com", conf: POD.replace("ndots:5", "ndots:1") },
  { name: "web", conf: POD.replace("search ", `search a ${LONG} `) }, // a too long candidate ends the search list
  { name: "db", conf: POD.replace("search default.svc.cluster.local", "search . other.svc.cluster.local") },
  { name: "web", conf: POD.replace("options ndots:5", "options ndots:5 no-aaaa") },
  { name: "nothere", conf: POD.replace("search ", "search default.svc.cluster.local # comment ") },
  { name: "web", env: { LOCALDOMAIN: "svc.cluster.local default.svc.cluster.local" } },
  { name: "example.com", env: { RES_OPTIONS: "ndots:1 attempts:1" } },
  // No reply: a timeout ends the search list (1 s each here).
  { name: "mute", conf: QUICK },
  // A answered, AAAA never: glibc falls back to single-request, then single-request-reopen.
  { name: "mute6", conf: QUICK },
];

interface Getent {
  code: number | null;
  lines: string[];
}

async function getent(ns: Netns, db: Mode, name: string, env?: Record<string, string>): Promise<Getent> {
  const r = await ns.exec("getent", [db, name], { env });
  return { code: r.code, lines: r.stdout.split("\n").filter((l) => l !== "") };
}

/** getent hosts: one line per address, "%-15s h_name aliases...". */
function hostsLines(t: Trace): string[] {
  const tail = [t.result.canonicalName, ...t.result.aliases].join(" ");
  return t.result.addresses.map((a) => `${a.padEnd(15)} ${tail}`);
}

/** getent ahosts: addresses (sorted by getaddrinfo, so compared as a set) and the canonical name. */
function ahostsView(lines: string[]): { addresses: string[]; canonicalName?: string } {
  const rows = lines.map((l) => l.trim().split(/\s+/));
  const addresses = [...new Set(rows.map((r) => r[0]))].sort();
  return { addresses, canonicalName: rows[0]?.[2] };
}

test("the resolver model sends what glibc sends and gets what getent gets", async (t) => {
  const ns = await createNetns(undefined, POD);
  let inside: Recorder | undefined;
  let outside: Recorder | undefined;
  try {
    inside = await startRecorder(ns, TABLE);
    outside = await startRecorder({ spawn: (cmd, args = []) => spawn(cmd, args) }, TABLE, "127.0.0.1", 0);
    for (const c of CASES) {
      const confText = c.conf ?? POD;
      for (const mode of ["ahosts", "hosts"] as const) {
        const how = [c.conf && summary(confText), c.env && JSON.stringify(c.env)].filter(Boolean).join(", ");
        await t.test(`${mode} ${c.name}${how ? ` (${how})` : ""}`, async () => {
          ns.writeResolvConf(confText);
          const conf = parseResolvConf(confText, "resolv.conf", { env: c.env });
          const servers = [{ address: "127.0.0.1", port: outside!.port }];
          // Side by side: each has its own server, and the timeout cases then cost their time once.
          const [real, trace] = await Promise.all([
            getent(ns, mode, c.name, c.env),
            resolve(c.name, { conf, mode, servers }),
          ]);
          const glibcSent = await inside!.take();
          const modelSent = await outside!.take();

          const predicted = trace.queries.map((q) => ({
            name: q.name,
            type: q.type,
            transport: q.transport,
          }));
          assert.deepEqual(predicted, glibcSent, "the model's query sequence differs from glibc's");
          assert.deepEqual(modelSent, glibcSent, "the queries the model sent differ from glibc's");
          assert.equal(
            real.code === 0,
            trace.result.resolved,
            `getent exit ${real.code}, model ${trace.result.error}`,
          );
          if (mode === "hosts") assert.deepEqual(hostsLines(trace), real.lines);
          else if (trace.result.resolved) {
            assert.deepEqual(
              { addresses: [...trace.result.addresses].sort(), canonicalName: trace.result.canonicalName },
              ahostsView(real.lines),
            );
          } else assert.deepEqual(real.lines, []);
        });
      }
    }
  } finally {
    await inside?.stop();
    await outside?.stop();
    await ns.destroy();
  }
});

function summary(conf: string): string {
  return conf
    .split("\n")
    .filter((l) => !l.startsWith("nameserver") && l !== "")
    .join("; ")
    .replace(/x{62}/g, "X")
    .replace(/y{61}/g, "Y");
}
