// The benchmark's RSS split (bench/processes.ts): anonymous, file-backed and shared memory read from a
// real /proc/PID/status, this test's own process. The kernel's VmRSS is the sum of the three, so the
// parser must find all three; a missing line must give undefined, not a zero that reads as a figure.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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

  it("samples the split while memory grows", async () => {
    const before = rssSplitOf(process.pid)!;
    const sampler = sampleRssSplit(process.pid, 10);
    const big = Buffer.alloc(64 << 20, 1); // 64 MiB of anonymous pages, touched
    await sleep(60);
    const peak = sampler.stop()!;
    assert.ok(peak.anon >= before.anon + 48, `peak anon ${peak.anon} MiB, before ${before.anon} MiB`);
    assert.equal(big[big.length - 1], 1);
  });
});
