// Soak part "node-local-restart": a node's clusterdns is replaced under load and no query is lost.
// In a node namespace, clusterdns with `nodelocal` serves 169.254.20.10 (its cluster read from the test
// API server, also in there); a pod namespace sends it a steady stream of cluster names with dnsperf.
// Meanwhile the process is replaced, as the DaemonSet's surge replaces it: a new one starts beside it
// on the same port (-reuseport), then the old one gets SIGTERM, waits until the new one serves
// (handover), keeps answering through lameduck and leaves, leaving the node set up for the new one.
// Counted: queries dnsperf sent and never got an answer to (target 0), and that the interface and rules
// are there after every replacement and gone after the last process stops.
//   node test/soak/node-local-restart.ts [--reduced]

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { createNodeAndPod } from "../helpers/netns-node.ts";
import {
  readObjects,
  startApiInNetns,
  startClusterdnsInNetns,
  type NetnsServer,
} from "../helpers/netns-cluster.ts";
import { ROOT } from "../helpers/server.ts";

const LINK_LOCAL = "169.254.20.10";

export const nodeLocalRestart: SoakPart = {
  name: "node-local-restart",
  what: "a node's clusterdns replaced under load (-reuseport, handover, lameduck): queries lost",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report(this.name);
    const restarts = o.reduced ? 1 : 5;
    const qps = o.reduced ? 500 : 2000;
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-soak-nodelocal-"));
    const env = await createNodeAndPod(`nameserver ${LINK_LOCAL}\n`);
    const running: NetnsServer[] = [];
    try {
      const kubeconfig = await startApiInNetns(
        env.node,
        readObjects(join(ROOT, "zones", "demo-cluster.yaml")),
        dir,
      );
      const corefile = join(dir, "Corefile");
      writeFileSync(
        corefile,
        `.:53 {
    bind ${LINK_LOCAL}
    nodelocal {
        handover 30s
    }
    health ${LINK_LOCAL}:8080 {
        lameduck 1s
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
    }
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
      // Long enough for every replacement: each takes a start (a few seconds here) and a lameduck.
      const seconds = 4 + restarts * (o.reduced ? 8 : 6);
      const perf = env.pod.exec(
        "dnsperf",
        [
          "-s",
          LINK_LOCAL,
          "-d",
          join(dir, "queries"),
          "-l",
          String(seconds),
          "-Q",
          String(qps),
          "-t",
          "3",
          "-c",
          "4",
          "-q",
          "50",
        ],
        { timeoutMs: (seconds + 30) * 1000 },
      );
      let setUp = 0;
      let reported = 0;
      for (let i = 0; i < restarts; i++) {
        await sleep(2000);
        const next = await start();
        if (next.logs.some((l) => String(l.msg).startsWith("another clusterdns serves these addresses")))
          reported++;
        const old = running.shift()!;
        running.push(next);
        o.log(`replacement ${i + 1}: new process up, stopping the old one`);
        await old.stop();
        const link = await env.node.exec("ip", ["-br", "addr", "show", "dev", "nodelocaldns"]);
        const rules = await env.node.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"]);
        if (link.stdout.includes(LINK_LOCAL) && rules.code === 0) setUp++;
      }
      const r = await perf;
      const num = (re: RegExp) => Number(re.exec(r.stdout)?.[1] ?? NaN);
      const sent = num(/Queries sent:\s+(\d+)/);
      const completed = num(/Queries completed:\s+(\d+)/);
      const lost = num(/Queries lost:\s+(\d+)/);
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
      await running.shift()!.stop();
      const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
      const rules = await env.node.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"]);
      report.check(
        "node set-up gone after the last process",
        link.code !== 0 && rules.code !== 0 ? "yes" : "no",
        link.code !== 0 && rules.code !== 0,
        "yes",
      );
      return report;
    } finally {
      for (const s of running) await s.stop();
      await env.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

if (import.meta.main) await runAlone(nodeLocalRestart);
