// The worker pool's lifecycle with a stand-in worker entry (a real thread): one that dies is logged and
// started again, and listens again on the ports it was given; stop ends them all.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { WorkerPool } from "./workers.ts";

/** Listens when told to, except the first time: then it dies (exit code 3), as a crashed worker. */
const ENTRY = `
import { parentPort, workerData } from "node:worker_threads";
import { existsSync, writeFileSync } from "node:fs";
parentPort.on("message", (m) => {
  if (m.t === "listen") {
    if (!existsSync(workerData.text)) {
      writeFileSync(workerData.text, String(m.ports.g));
      process.exit(3);
    }
    parentPort.postMessage({ t: "listening" });
  } else if (m.t === "stop") process.exit(0);
});
`;

test("a worker that dies is logged and started again, and told to listen again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-pool-"));
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  writeFileSync(join(dir, "entry.mjs"), ENTRY);
  const pool = new WorkerPool({
    threads: 1,
    entry: pathToFileURL(join(dir, "entry.mjs")),
    log,
    data: {
      text: join(dir, "died"),
      fileStamps: {},
      file: "Corefile",
      root: dir,
      defaultPort: 53,
      udpEngine: "dgram",
    },
  });
  try {
    assert.equal(pool.ready, false);
    await pool.listen({ g: 5353 }, 100);
    for (let i = 0; i < 100 && !pool.ready; i++) await sleep(50);
    assert.equal(pool.ready, true, "the restarted worker listens");
    const died = lines.find((l) => l.code === 3);
    assert.ok(died, JSON.stringify(lines));
    assert.equal(died.worker, 1);
    assert.match(String(died.msg), /worker exited: its sockets left the port/);
  } finally {
    await pool.stop(2000);
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(pool.ready, false, "stopped");
});

/** Takes a reload and dies right after it; started again, writes what it was started with. */
const DIES_AFTER_RELOAD = `
import { parentPort, workerData } from "node:worker_threads";
import { writeFileSync } from "node:fs";
parentPort.on("message", (m) => {
  if (m.t === "reload") {
    parentPort.postMessage({ t: "reloaded" });
    setTimeout(() => process.exit(3), 10);
  } else if (m.t === "listen") {
    if (workerData.text.startsWith("reloaded")) writeFileSync(workerData.root + "/started", JSON.stringify(workerData));
    parentPort.postMessage({ t: "listening" });
  } else if (m.t === "stop") process.exit(0);
});
`;

test("a worker started again after a reload sets up the reload's Corefile, with the file stamps the main thread read", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-pool-"));
  writeFileSync(join(dir, "entry.mjs"), DIES_AFTER_RELOAD);
  const pool = new WorkerPool({
    threads: 1,
    entry: pathToFileURL(join(dir, "entry.mjs")),
    log: pino({ level: "silent" }),
    data: {
      text: "first",
      fileStamps: { "/kubeconfig": "1:10:100" },
      file: "Corefile",
      root: dir,
      defaultPort: 53,
      udpEngine: "dgram",
    },
  });
  try {
    await pool.listen({ g: 5353 }, 2000);
    await pool.reload({ text: "reloaded", fileStamps: { "/kubeconfig": "2:10:200" } }, { g: 5353 }, 2000);
    let started: { text?: string; fileStamps?: unknown } = {};
    for (let i = 0; i < 100 && started.text === undefined; i++) {
      await sleep(50);
      try {
        started = JSON.parse(readFileSync(join(dir, "started"), "utf8")) as typeof started;
      } catch {
        // not started again yet
      }
    }
    assert.equal(started.text, "reloaded");
    assert.deepEqual(started.fileStamps, { "/kubeconfig": "2:10:200" });
  } finally {
    await pool.stop(2000);
    rmSync(dir, { recursive: true, force: true });
  }
});
