// Forwarding that an off-path attacker cannot poison (issue 33, part 3). Two network namespaces joined
// by a veth pair: "node" runs clusterdns, forwarding to the upstream at 10.244.0.5:53 in "upstream"
// (test/upstream/late-upstream.ts, which answers DELAY_MS late, as a far resolver does). The attacker
// sits in the upstream's namespace and, while a name is forwarded, sends forged replies for every one
// of the 65,536 IDs from the upstream's address and port (raw sockets: test/upstream/forge-replies.py)
// to the port the query went out from, which it reads with `ss` in the node's namespace: more than an
// off-path attacker could know. The client must still get the real address; the forgeries are counted.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createNodeAndPod, NODE_IP, POD_IP, type NodeAndPod } from "./helpers/netns-node.ts";
import { startClusterdnsInNetns, waitForLine, type NetnsServer } from "./helpers/netns-cluster.ts";
import { parseDig } from "./helpers/dig.ts";
import { sample } from "./helpers/metrics.ts";
import { ROOT } from "./helpers/server.ts";
import type { Netns } from "./helpers/netns.ts";

const NAME = "victim-of-spoofing.example.org.";
const REAL = "192.0.2.1";
const FORGED = "6.6.6.6";
/** How late the upstream answers: longer than learning the port and the flood take on a loaded 2-core
 * machine (0.5-1 s and 1-3 s), shorter than forward's 5 s for all tries of a query. */
const DELAY_MS = 4000;
const UPSTREAM = `${POD_IP}:53`;
const FORGER = join(ROOT, "test", "upstream", "forge-replies.py");
/** Debian's python3 (`./dev test` installs it); a version manager's shim on PATH can take seconds. */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/** The local ports of clusterdns's UDP sockets to the upstream now, as `ss` shows them. */
async function upstreamPorts(node: Netns): Promise<number[]> {
  const r = await node.exec("ss", ["-Hnu", "dst", UPSTREAM]);
  return [
    ...r.stdout.matchAll(
      new RegExp(`${NODE_IP.replaceAll(".", "\\.")}:(\\d+)\\s+${POD_IP.replaceAll(".", "\\.")}:53`, "g"),
    ),
  ].map((m) => Number(m[1]));
}

/** The first port a socket to the upstream shows up on, polled for up to 3 s. */
async function learnPort(node: Netns, not: number[] = []): Promise<number> {
  for (const end = Date.now() + 3000; Date.now() < end; await sleep(5)) {
    const ports = (await upstreamPorts(node)).filter((p) => !not.includes(p));
    if (ports.length > 0) return ports[0];
  }
  throw new Error("no UDP socket to the upstream appeared within 3 s");
}

/** Forged replies for every ID, to each port; resolves with the forger's own figures. */
async function flood(upstream: Netns, ports: number[]): Promise<{ sent: number; seconds: number }> {
  const args = [FORGER, POD_IP, "53", NODE_IP, ports.join(","), NAME, FORGED];
  const r = await upstream.exec(PYTHON, args, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `forge-replies.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { sent: number; seconds: number };
}

describe("forward: forged replies from the upstream's address never answer a forwarded query", () => {
  let env: NodeAndPod;
  let dir: string;
  let server: NetnsServer | undefined;

  /** dig in the node's namespace, long enough for two late tries. */
  const ask = async () => {
    const r = await env.node.exec("dig", ["@127.0.0.1", NAME, "A", "+tries=1", "+time=9", "+nocookie"]);
    return parseDig(r.stdout).answer.map((line) => line.split(" ").at(-1));
  };
  const rejected = async (): Promise<Record<string, number>> => {
    const r = await env.node.exec("curl", ["-s", "http://127.0.0.1:9153/metrics"]);
    const out: Record<string, number> = {};
    for (const reason of ["id", "qr", "question", "case", "malformed"]) {
      out[reason] =
        sample(r.stdout, "clusterdns_forward_rejected_replies_total", { to: UPSTREAM, reason }) ?? 0;
    }
    return out;
  };

  before(async () => {
    env = await createNodeAndPod("nameserver 127.0.0.1\n");
    dir = mkdtempSync(join(tmpdir(), "clusterdns-spoof-"));
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
  });

  after(async () => {
    await server?.stop();
    await env?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  let firstPort = 0;

  test("a flood of every ID at the query's own port, spoofed from the upstream, is refused", async () => {
    const was = await rejected();
    const started = Date.now();
    const answer = ask();
    firstPort = await learnPort(env.node);
    const learnedMs = Date.now() - started;
    const f = await flood(env.pod, [firstPort]);
    assert.equal(f.sent, 65_536);
    const addresses = await answer;
    const now = await rejected();
    const got = Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - was[k]]));
    console.log(`flood: ${JSON.stringify({ learnedMs, ...f, answer: addresses, rejected: got })}`);
    assert.deepEqual(addresses, [REAL], "the client got the upstream's address");
    // The flood reached the socket while it waited: forgeries with wrong IDs were dropped and counted.
    assert.ok(got.id > 0, `no forged reply was counted: ${JSON.stringify(got)}`);
    // The one with the right ID, when it was not dropped by the socket's full buffer, failed the 0x20
    // case check (`case`), and the query went out again on a new port.
    assert.ok(got.case <= 1, JSON.stringify(got));
  });

  test("the next query goes out from another port: a flood at the one learned before reaches nothing", async () => {
    assert.ok(firstPort > 0, "needs the port of the test before");
    // The answer cache replays a forwarded reply for 1 s (FORWARD_MAX_AGE): past that, it is forwarded.
    await sleep(1500);
    const was = await rejected();
    const answer = ask();
    const port = await learnPort(env.node, [firstPort]);
    const f = await flood(env.pod, [firstPort]);
    assert.equal(f.sent, 65_536);
    assert.deepEqual(await answer, [REAL]);
    assert.notEqual(port, firstPort);
    // Nothing listens on the old port any more: no forgery reached a socket of clusterdns.
    const now = await rejected();
    assert.deepEqual(now, was, `port ${port}, flooded ${firstPort}`);
  });
});
