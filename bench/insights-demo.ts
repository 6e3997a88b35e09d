// insights end to end on the demo cluster: the test API server serves zones/demo-cluster.yaml plus a
// few "pods" at loopback addresses; a client plays each pod, walking its search list as glibc does
// (the resolver model's candidates(), A and AAAA per step, stopping at the first answer) from the
// pod's own address; clusterdns runs kubeadm-style with insights. Prints `clusterdns top --once`
// and, with chromium on the machine, writes a screenshot of the page.
//   node bench/insights-demo.ts [--seconds 20] [--screenshot docs/insights.png]

import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { serveCluster } from "./cluster-api.ts";
import { readObjects } from "../test/helpers/netns-cluster.ts";
import { freePort } from "../test/helpers/free-port.ts";
import { namespace, pod } from "../test/k8s/objects.ts";
import { candidates } from "../src/resolver/search.ts";
import { parseResolvConf, podResolvConf } from "../src/resolver/resolv-conf.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..");
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const seconds = Number(arg("--seconds") ?? 20);
const screenshot = arg("--screenshot");

interface Player {
  ns: string;
  name: string;
  ip: string;
  owner?: { kind: string; name: string; hash?: string };
  hostNetwork?: boolean;
  /** Names it looks up, each once per round. */
  asks: string[];
}

const PLAYERS: Player[] = [
  {
    ns: "web",
    name: "checkout-7d4b9c6f5-x2x9q",
    ip: "127.0.0.21",
    owner: { kind: "ReplicaSet", name: "checkout-7d4b9c6f5", hash: "7d4b9c6f5" },
    asks: ["api.github.com", "payments.example.com", "nginx"],
  },
  {
    ns: "web",
    name: "cart-5f6d7c8b9-abcde",
    ip: "127.0.0.22",
    owner: { kind: "ReplicaSet", name: "cart-5f6d7c8b9", hash: "5f6d7c8b9" },
    asks: ["nginx.default", "s3.amazonaws.com."],
  },
  {
    ns: "default",
    name: "report-29012345-q8w7e",
    ip: "127.0.0.23",
    owner: { kind: "Job", name: "report-29012345" },
    asks: ["storage.googleapis.com", "my-nginx"],
  },
  {
    ns: "kube-system",
    name: "node-exporter-k2j4h",
    ip: "127.0.0.30",
    hostNetwork: true,
    asks: ["nginx.default"],
  },
];

const HOSTS = ["api.github.com", "payments.example.com", "s3.amazonaws.com", "storage.googleapis.com"]
  .map((n, i) => `        192.0.2.${10 + i} ${n}`)
  .join("\n");

/** Asks `name` of type `type` from `from`; resolves with the rcode (or -1 on timeout). */
function ask(port: number, from: string, name: string, type: number): Promise<number> {
  return new Promise((resolve) => {
    const s = createSocket("udp4");
    const done = (rcode: number) => {
      clearTimeout(timer);
      s.close();
      resolve(rcode);
    };
    const timer = setTimeout(() => done(-1), 2000);
    s.on("message", (m) => done(m[3] & 0x0f));
    s.bind(0, from, () =>
      s.send(encode(newQuery(`${name.replace(/\.$/, "")}.`, type, 1, 1)), port, "127.0.0.1"),
    );
  });
}

/** One lookup as glibc's getaddrinfo walks it: A and AAAA per candidate, until one is not NXDOMAIN. */
async function lookup(port: number, p: Player, name: string): Promise<void> {
  const conf = parseResolvConf(podResolvConf(p.hostNetwork ? "default" : p.ns));
  for (const c of candidates(name, conf)) {
    const [a] = await Promise.all([ask(port, p.ip, c, Type.A), ask(port, p.ip, c, Type.AAAA)]);
    if (a !== 3) return;
  }
}

const dir = mkdtempSync(join(tmpdir(), "clusterdns-insights-demo-"));
const objects = readObjects(join(ROOT, "zones", "demo-cluster.yaml"));
const { api, kubeconfig } = await serveCluster(objects, dir);
for (const p of PLAYERS) {
  if (api.get("namespaces", undefined, p.ns) === undefined) api.create("namespaces", namespace(p.ns));
  const o = pod(p.ns, p.name, p.ip, {
    hostNetwork: p.hostNetwork,
    hostIP: p.hostNetwork ? p.ip : "172.18.0.2",
    labels: p.owner?.hash ? { "pod-template-hash": p.owner.hash } : {},
  });
  if (p.owner) {
    Object.assign(o.metadata, {
      ownerReferences: [{ kind: p.owner.kind, name: p.owner.name, controller: true }],
    });
  }
  api.create("pods", o);
}
// Every other name: NXDOMAIN from a root zone of our own (no traffic leaves the machine).
writeFileSync(
  join(dir, "root.zone"),
  "$ORIGIN .\n$TTL 60\n@ IN SOA ns.root. hostmaster.root. 1 7200 1800 86400 60\n@ IN NS ns.root.\n",
);
const port = await freePort();
const insightsPort = await freePort();
writeFileSync(
  join(dir, "Corefile"),
  `. {
    errors
    insights {
        listen 127.0.0.1:${insightsPort}
        kubeconfig ${kubeconfig}
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    hosts {
${HOSTS}
        fallthrough
    }
    file ${join(dir, "root.zone")} .
    cache 30
}
`,
);
const server = spawn(
  process.execPath,
  [join(ROOT, "bin", "clusterdns"), "-conf", join(dir, "Corefile"), "-dns.port", String(port)],
  {
    stdio: "ignore",
  },
);
const base = `http://127.0.0.1:${insightsPort}`;
for (let i = 0; i < 200; i++) {
  const r = await fetch(`${base}/api/insights`).catch(() => undefined);
  if (r?.ok && ((await r.json()) as { attribution: { pods: number } }).attribution.pods >= PLAYERS.length)
    break;
  await new Promise((r) => setTimeout(r, 100));
}
const end = Date.now() + seconds * 1000;
let lookups = 0;
while (Date.now() < end) {
  await Promise.all(PLAYERS.flatMap((p) => p.asks.map((n) => lookup(port, p, n))));
  lookups += PLAYERS.reduce((t, p) => t + p.asks.length, 0);
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(`${lookups} lookups by ${PLAYERS.length} pods in ${seconds} s\n\n`);
const top = await run(process.execPath, [
  join(ROOT, "bin", "clusterdns"),
  "top",
  "--server",
  `127.0.0.1:${insightsPort}`,
  "--once",
]);
process.stdout.write(top.stdout);
if (screenshot !== undefined) {
  await run(
    "chromium",
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      `--user-data-dir=${join(dir, "chromium")}`,
      "--window-size=1280,1500",
      "--virtual-time-budget=5000",
      `--screenshot=${join(process.cwd(), screenshot)}`,
      `${base}/`,
    ],
    { timeout: 60_000 },
  );
  process.stdout.write(`\nscreenshot: ${screenshot}\n`);
}
server.kill("SIGTERM");
await new Promise((r) => server.once("exit", r));
await api.close();
rmSync(dir, { recursive: true, force: true });
