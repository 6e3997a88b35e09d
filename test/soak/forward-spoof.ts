// Soak part "forward-spoof": forwarding that an off-path attacker cannot poison (issue 33, part 3).
// Two network namespaces joined by a veth pair: the node runs clusterdns, forwarding to 10.244.0.5:53 in
// the upstream's namespace, where test/upstream/late-upstream.ts answers DELAY_MS late, as a resolver
// with a cold cache does. While a name is forwarded, an attacker in the upstream's namespace sends
// forged replies (6.6.6.6) for every one of the 65,536 IDs from the upstream's address and port, with
// raw sockets (test/upstream/forge-replies.py), to the port the query went out from, which it reads
// with `ss` in the node's namespace: more than an off-path attacker can know. Then a second query is
// forwarded while the port of the first is flooded again. Each round is 2 floods of 65,536 packets
// and ends within ~20 s. Figures: answers with the forged address (target 0), with the upstream's
// (target all), floods counted as rejected replies (target all), forgeries at the previous port that
// reached a socket (target 0), and how many floods had their right-ID forgery refused for its case.
//   npm run soak -- forward-spoof [--reduced]     (or node test/soak/forward-spoof.ts [--reduced])

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { createNodeAndPod, NODE_IP, POD_IP, type NodeAndPod } from "../helpers/netns-node.ts";
import { startClusterdnsInNetns, waitForLine, type NetnsServer } from "../helpers/netns-cluster.ts";
import { parseDig } from "../helpers/dig.ts";
import { sample } from "../helpers/metrics.ts";
import { ROOT } from "../helpers/server.ts";
import type { Netns } from "../helpers/netns.ts";

const NAME = "victim-of-spoofing.example.org.";
const REAL = "192.0.2.1";
const FORGED = "6.6.6.6";
/** How late the upstream answers: longer than learning the port and the flood take on a loaded 2-core
 * machine (0.5-1 s and 1.5-4 s), shorter than forward's 5 s for all tries of a query. */
const DELAY_MS = 4000;
const UPSTREAM = `${POD_IP}:53`;
const FORGER = join(ROOT, "test", "upstream", "forge-replies.py");
/** Debian's python3 (`./dev test` installs it); a version manager's shim on PATH can take seconds. */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const REASONS = ["id", "qr", "question", "case", "malformed"] as const;
type Counts = Record<(typeof REASONS)[number], number>;

/** The local port of clusterdns's first UDP socket to the upstream, polled for 3 s. */
async function learnPort(node: Netns): Promise<number> {
  const socket = new RegExp(
    `${NODE_IP.replaceAll(".", "\\.")}:(\\d+)\\s+${POD_IP.replaceAll(".", "\\.")}:53`,
    "g",
  );
  for (const end = Date.now() + 3000; Date.now() < end; await sleep(5)) {
    const r = await node.exec("ss", ["-Hnu", "dst", UPSTREAM]);
    const ports = [...r.stdout.matchAll(socket)].map((m) => Number(m[1]));
    if (ports.length > 0) return ports[0];
  }
  throw new Error("no UDP socket to the upstream appeared within 3 s");
}

/** Forged replies for every ID to `port`; the forger's own figures. */
async function flood(upstream: Netns, port: number): Promise<{ sent: number; seconds: number }> {
  const args = [FORGER, POD_IP, "53", NODE_IP, String(port), NAME, FORGED];
  const r = await upstream.exec(PYTHON, args, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`forge-replies.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { sent: number; seconds: number };
}

/** The addresses a dig in the node's namespace got for NAME (long enough for two late tries). */
async function ask(node: Netns): Promise<string[]> {
  const r = await node.exec("dig", ["@127.0.0.1", NAME, "A", "+tries=1", "+time=9", "+nocookie"]);
  return parseDig(r.stdout).answer.map((line) => line.split(" ").at(-1) ?? "");
}

/** clusterdns_forward_rejected_replies_total for the upstream, by reason. */
async function rejected(node: Netns): Promise<Counts> {
  const r = await node.exec("curl", ["-s", "http://127.0.0.1:9153/metrics"]);
  const name = "clusterdns_forward_rejected_replies_total";
  return Object.fromEntries(
    REASONS.map((k) => [k, sample(r.stdout, name, { to: UPSTREAM, reason: k }) ?? 0]),
  ) as Counts;
}

const minus = (a: Counts, b: Counts) => Object.fromEntries(REASONS.map((k) => [k, a[k] - b[k]])) as Counts;

export const forwardSpoof: SoakPart = {
  name: "forward-spoof",
  what: "forged replies for all 65,536 IDs from the upstream's address at a forwarded query's port: never taken",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report(this.name);
    const rounds = o.reduced ? 1 : 10;
    const env: NodeAndPod = await createNodeAndPod("nameserver 127.0.0.1\n");
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-spoof-"));
    let server: NetnsServer | undefined;
    try {
      const late = join(ROOT, "test", "upstream", "late-upstream.ts");
      const up = env.pod.spawn(process.execPath, [late, POD_IP, "53", String(DELAY_MS), NAME, REAL]);
      await waitForLine(up, /"ready"/, "the late upstream");
      const corefile = join(dir, "Corefile");
      // max_fails 0: no health checks, so every socket to the upstream is a query's.
      writeFileSync(
        corefile,
        `.:53 {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:9153\n    forward . ${UPSTREAM} {\n        max_fails 0\n        read_timeout 4500ms\n    }\n}\n`,
      );
      server = await startClusterdnsInNetns(env.node, corefile, {}, { ready: /"msg":"started"/ });
      let forged = 0;
      let real = 0;
      let counted = 0;
      let caseRefused = 0;
      let reachedOld = 0;
      const idCounts: number[] = [];
      const seconds: number[] = [];
      for (let round = 0; round < rounds; round++) {
        // A flood at the port the query went out from, while the upstream has not answered yet.
        let was = await rejected(env.node);
        let answer = ask(env.node);
        const port = await learnPort(env.node);
        const f = await flood(env.pod, port);
        let got = await answer;
        const d = minus(await rejected(env.node), was);
        o.log(
          `round ${round + 1}: port ${port}, flood ${f.seconds} s, answer ${got.join(" ")}, rejected ${JSON.stringify(d)}`,
        );
        forged += got.includes(FORGED) ? 1 : 0;
        real += got.length === 1 && got[0] === REAL ? 1 : 0;
        counted += d.id > 0 ? 1 : 0;
        caseRefused += d.case;
        idCounts.push(d.id);
        seconds.push(f.seconds);
        // The answer cache replays a forwarded reply for 1 s: past that, the next query is forwarded.
        await sleep(1500);
        // The next query, while the port of the one before is flooded.
        was = await rejected(env.node);
        answer = ask(env.node);
        // Wait until it is in flight (a server that reuses its socket is still on `port`).
        const next = await learnPort(env.node);
        await flood(env.pod, port);
        got = await answer;
        const after = minus(await rejected(env.node), was);
        forged += got.includes(FORGED) ? 1 : 0;
        real += got.length === 1 && got[0] === REAL ? 1 : 0;
        reachedOld += REASONS.reduce((n, k) => n + after[k], 0);
        o.log(
          `  next query: port ${next}, flood at ${port}, answer ${got.join(" ")}, rejected ${JSON.stringify(after)}`,
        );
        await sleep(1500);
      }
      const queries = 2 * rounds;
      report.check("answers with the forged address", forged, forged === 0, "0");
      report.check("answers with the upstream's address", `${real} of ${queries}`, real === queries, "all");
      report.check(
        "floods at the query's port seen and counted",
        `${counted} of ${rounds}`,
        counted === rounds,
        "all",
      );
      report.note(
        "forgeries counted per flood (reason id)",
        `${Math.min(...idCounts)}-${Math.max(...idCounts)}`,
      );
      report.note(
        "floods whose right-ID forgery was refused for its 0x20 case",
        `${caseRefused} of ${rounds}`,
      );
      report.note("seconds per flood of 65,536", `${Math.min(...seconds)}-${Math.max(...seconds)}`);
      report.check(
        "forgeries at the previous query's port that reached a socket",
        reachedOld,
        reachedOld === 0,
        "0",
      );
      report.alive(server.proc);
    } finally {
      await server?.stop();
      await env.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
    return report;
  },
};

if (import.meta.main) await runAlone(forwardSpoof);
