// The benchmark's RSS split (bench/processes.ts): anonymous, file-backed and shared memory read from a
// real /proc/PID/status, this test's own process. The kernel's VmRSS is the sum of the three, so the
// parser must find all three; a missing line must give undefined, not a zero that reads as a figure.
// The sampler that reads the split at the load's peak runs against a child that grows and then frees.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parseRssSplit, rssSplitOf, sampleRssSplit } from "../bench/processes.ts";

const vmRssMib = (status: string) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) / 1024;

describe("bench RSS split", () => {
  it("reads RssAnon, RssFile and RssShmem of a real process; they add up to VmRSS", () => {
    const status = readFileSync(`/proc/${process.pid}/status`, "utf8");
    const split = parseRssSplit(status);
    assert.ok(split, "all three lines found");
    // Node's heap is anonymous; its binary's pages are file-backed: both are well above a MiB.
    assert.ok(split.anon > 1, `anon ${split.anon} MiB`);
    assert.ok(split.file > 1, `file ${split.file} MiB`);
    assert.ok(split.shmem >= 0);
    assert.ok(Math.abs(split.anon + split.file + split.shmem - vmRssMib(status)) < 0.01, "sums to VmRSS");
  });

  it("gives undefined when a line is missing, and for a process that is gone", () => {
    const status = readFileSync(`/proc/${process.pid}/status`, "utf8");
    assert.equal(parseRssSplit(status.replace(/^RssFile:.*$/m, "")), undefined);
    const gone = spawnSync("true").pid;
    assert.equal(rssSplitOf(gone), undefined);
  });

  it("keeps the sample of the highest RSS, not the last one", async () => {
    // A child that touches 64 MiB of anonymous memory, holds it, frees it (a large malloc is unmapped
    // at once) and stays up: the sampler must keep the peak, while the split now is back down.
    const script = [
      'let b = Buffer.alloc(64 << 20, 1); console.log("grown");',
      "setTimeout(() => { b = undefined; globalThis.gc(); }, 300);",
      "setTimeout(() => {}, 5000);",
    ].join("\n");
    const child = spawn(process.execPath, ["--expose-gc", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      await once(child.stdout!, "data");
      const sampler = sampleRssSplit(child.pid!, 10);
      await sleep(700);
      const peak = sampler.stop()!;
      const now = rssSplitOf(child.pid)!;
      assert.ok(peak.anon >= now.anon + 48, `peak anon ${peak.anon} MiB, now ${now.anon} MiB`);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
