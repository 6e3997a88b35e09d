// Soak part "node-local-restart": a node's clusterdns is replaced, then removed, under load, and no
// query is lost. In a node namespace, clusterdns with `nodelocal` serves 169.254.20.10 and the kube-dns
// Service IP (the transparent variant; its cluster read from the test API server, also in there), and
// a stand-in kube-dns behind a kube-proxy-like DNAT of the Service IP; a pod namespace sends the
// Service IP a steady stream of cluster names with dnsperf, and a hostNetwork client holds sockets
// connected to both addresses all along. Meanwhile the process is replaced, as the DaemonSet's surge
// replaces it: a new one starts beside it on the same port (-reuseport), then the old one gets SIGTERM,
// waits until the new one serves (handover), keeps answering through lameduck and leaves, leaving the
// node set up for the new one. During each overlap the node's metrics port is scraped. Last, the
// process stops with no successor while the load goes on, which kube-dns then answers.
// Counted: queries dnsperf sent and never got an answer to (target 0), the interface and rules there
// after every replacement and gone after the last process (the client's sockets notwithstanding), and
// every scrape of an overlap reading one process.
//   node test/soak/node-local-restart.ts [--reduced]

import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { connectedClient, createNodeAndPod, kubeProxyDnat, NODE_IP } from "../helpers/netns-node.ts";
import type { Netns } from "../helpers/netns.ts";
import {
  readObjects,
  startApiInNetns,
  startClusterdnsInNetns,
  type NetnsServer,
} from "../helpers/netns-cluster.ts";
import { ROOT } from "../helpers/server.ts";

const LINK_LOCAL = "169.254.20.10";
const KUBE_DNS = "10.96.0.10";
/** Scrapes per overlap of an old and a new process. */
const SCRAPES = 10;

export const nodeLocalRestart: SoakPart = {
  name: "node-local-restart",
  what: "a node's clusterdns replaced under load (-reuseport, handover, lameduck): queries lost",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report(this.name);
    const restarts = o.reduced ? 1 : 5;
    const qps = o.reduced ? 500 : 2000;
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-soak-nodelocal-"));
    const env = await createNodeAndPod(`nameserver ${KUBE_DNS}\n`);
    const running: NetnsServer[] = [];
    let central: NetnsServer | undefined;
    let client: ChildProcess | undefined;
    try {
      const kubeconfig = await startApiInNetns(
        env.node,
        readObjects(join(ROOT, "zones", "demo-cluster.yaml")),
        dir,
      );
      // kube-dns: a clusterdns on the node's own address reading the same API, reached through the DNAT.
      const kubernetes = `kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
    }`;
      const centralConf = join(dir, "Central");
      writeFileSync(centralConf, `.:5353 {\n    bind ${NODE_IP}\n    ${kubernetes}\n}\n`);
      central = await startClusterdnsInNetns(env.node, centralConf);
      await kubeProxyDnat(env.node, KUBE_DNS, `${NODE_IP}:5353`);
      const corefile = join(dir, "Corefile");
      writeFileSync(
        corefile,
        `.:53 {
    bind ${LINK_LOCAL} ${KUBE_DNS}
    nodelocal {
        handover 10s
    }
    health ${LINK_LOCAL}:8080 {
        lameduck 1s
    }
    prometheus :9253
    ${kubernetes}
}
`,
      );
      const names = [
        "nginx.default.svc.cluster.local A",
        "nginx.web.svc.cluster.local A",
        "kube-dns.kube-system.svc.cluster.local A",
        "_http._tcp.nginx.default.svc.cluster.local SRV",
        "10-244-4-3.default.pod.cluster.local A",
      ];
      writeFileSync(join(dir, "queries"), names.join("\n") + "\n");
      const start = () =>
        startClusterdnsInNetns(
          env.node,
          corefile,
          {},
          { flags: ["-reuseport"], ready: /NOTRACK rules ready/ },
        );
      running.push(await start());
      client = await connectedClient(env.node, [LINK_LOCAL, KUBE_DNS]);
      // Each event under a load of its own, so that none falls outside it however long starts take
      // on a busy machine: a replacement within 15 s (a start takes a few seconds here, then handover
      // and lameduck), the removal within 18 s (handover waits its 10 s for a successor that never
      // comes, then lameduck), with load after it.
      const totals = { sent: 0, completed: 0, lost: 0, covered: 0 };
      const underLoad = async (seconds: number, event: () => Promise<void>) => {
        let done = false;
        const load = ["-s", KUBE_DNS, "-d", join(dir, "queries"), "-l", `${seconds}`, "-Q", `${qps}`];
        const perf = env.pod
          .exec("dnsperf", [...load, "-t", "3", "-c", "4", "-q", "50"], {
            timeoutMs: (seconds + 30) * 1000,
          })
          .finally(() => (done = true));
        await sleep(1000);
        await event();
        if (!done) totals.covered++;
        const r = await perf;
        const num = (re: RegExp) => Number(re.exec(r.stdout)?.[1] ?? NaN);
        totals.sent += num(/Queries sent:\s+(\d+)/);
        totals.completed += num(/Queries completed:\s+(\d+)/);
        totals.lost += num(/Queries lost:\s+(\d+)/);
      };
      let setUp = 0;
      let reported = 0;
      let oneProcess = 0;
      for (let i = 0; i < restarts; i++) {
        await underLoad(15, async () => {
          const next = await start();
          if (next.logs.some((l) => String(l.msg).startsWith("another clusterdns serves these addresses")))
            reported++;
          const readers = await scrapeStarts(env.pod, SCRAPES);
          if (readers.size === 1) oneProcess++;
          const old = running.shift()!;
          running.push(next);
          o.log(`replacement ${i + 1}: new process up (scrapes read ${readers.size}), stopping the old one`);
          await old.stop();
          const link = await env.node.exec("ip", ["-br", "addr", "show", "dev", "nodelocaldns"]);
          const rules = await env.node.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"]);
          if (link.stdout.includes(LINK_LOCAL) && rules.code === 0) setUp++;
        });
      }
      // The removal: no successor; the load goes on, to kube-dns through the DNAT.
      o.log("removing the last process under load");
      await underLoad(18, () => running.shift()!.stop());
      const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
      const rules = await env.node.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"]);
      const { sent, completed, lost, covered } = totals;
      report.note("replacements", restarts);
      report.note("queries sent", sent);
      report.check("queries lost", lost, lost === 0 && completed === sent && sent > 0, "0");
      report.check(
        "the new process reported the old one",
        `${reported}/${restarts}`,
        reported === restarts,
        `${restarts}/${restarts}`,
      );
      report.check(
        "node set up after each replacement",
        `${setUp}/${restarts}`,
        setUp === restarts,
        `${restarts}/${restarts}`,
      );
      report.check(
        `overlaps whose ${SCRAPES} scrapes all read one process`,
        `${oneProcess}/${restarts}`,
        oneProcess === restarts,
        `${restarts}/${restarts}`,
      );
      report.check(
        "replacements and the removal done while dnsperf ran",
        `${covered}/${restarts + 1}`,
        covered === restarts + 1,
        `${restarts + 1}/${restarts + 1}`,
      );
      report.check(
        "node set-up gone after the last process, a client connected",
        link.code !== 0 && rules.code !== 0 ? "yes" : "no",
        link.code !== 0 && rules.code !== 0,
        "yes",
      );
      return report;
    } finally {
      for (const s of running) await s.stop();
      client?.kill();
      await central?.stop();
      await env.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** The start times (process_start_time_seconds) of the processes that answered `n` scrapes of the
 * node's metrics port, each on a connection of its own, from the pod. */
async function scrapeStarts(pod: Netns, n: number): Promise<Set<string>> {
  const script = `const http = require("node:http");
(async () => {
  for (let i = 0; i < ${n}; i++) {
    const text = await new Promise((ok) => {
      http.get({ host: "${NODE_IP}", port: 9253, path: "/metrics", agent: false }, (res) => {
        let b = ""; res.on("data", (d) => (b += d)); res.on("end", () => ok(b));
      }).on("error", (e) => ok("error " + e.message));
    });
    console.log(/^process_start_time_seconds (\\S+)$/m.exec(text)?.[1] ?? text.slice(0, 80));
  }
})();`;
  const r = await pod.exec(process.execPath, ["-e", script], { timeoutMs: 30_000 });
  return new Set(r.stdout.trim().split("\n"));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

if (import.meta.main) await runAlone(nodeLocalRestart);
