// The metrics port across a surge: two clusterdns processes started with -reuseport (as the node-local
// DaemonSet's old and new pods on one node) name the same prometheus address. One process holds it at
// a time, so every scrape reads one process's counters: the old one's until it exits, then the new
// one's. Shared (as health and ready are), each new connection went to either process, and the
// counters a scraper saw jumped between the two.

import { test } from "node:test";
import assert from "node:assert/strict";
import { get } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { freePort } from "./helpers/free-port.ts";

/** GET /metrics on a connection of its own (a scraper's next scrape may reach either process). */
function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/metrics", agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

/** Which of the processes answered the scrape: the one whose DNS port its series name. */
function whose(text: string, ports: Record<string, number>): string[] {
  return Object.entries(ports)
    .filter(([, p]) => text.includes(`server="dns://:${p}"`))
    .map(([name]) => name);
}

test("-reuseport: one process at a time holds the metrics port; the next takes it when the first exits", async () => {
  const metrics = await freePort();
  const corefile = `. {\n    whoami\n    prometheus 127.0.0.1:${metrics}\n}\n`;
  const old = await startServer(corefile, { args: ["-reuseport"] });
  let next: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    next = await startServer(corefile, { args: ["-reuseport"] });
    const ports = { old: old.port, next: next.port };
    // Each process's series appear once it has answered a query.
    assert.equal((await dig(old.port, "example.org", "A")).status, "NOERROR");
    assert.equal((await dig(next.port, "example.org", "A")).status, "NOERROR");
    const during = new Set<string>();
    for (let i = 0; i < 20; i++) for (const w of whose(await scrape(metrics), ports)) during.add(w);
    assert.deepEqual([...during], ["old"], "during the surge every scrape reads the old process");
    assert.ok(
      next.logs.some((l) => l.msg === "another process holds the port: taking it once it lets go"),
      JSON.stringify(next.logs.map((l) => l.msg)),
    );

    assert.equal(await old.stop(), 0);
    const deadline = Date.now() + 10_000;
    let after: string[] = [];
    while (Date.now() < deadline) {
      after = await scrape(metrics).then(
        (t) => whose(t, ports),
        () => [],
      );
      if (after.length > 0) break;
      await sleep(100);
    }
    assert.deepEqual(after, ["next"], "the new process took the port over");
    assert.ok(next.logs.some((l) => l.msg === "listening on the port it waited for"));
  } finally {
    await next?.stop();
    await old.stop();
  }
});
