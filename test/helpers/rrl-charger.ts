// A thread for src/plugins/rrl/accounts.test.ts: charges accounts of a shared table as fast as it can,
// all at one moment (so only the charges move the accounts), and reports what each charge returned.

import { parentPort, workerData } from "node:worker_threads";
import { AccountTable } from "../../src/plugins/rrl/accounts.ts";

interface Job {
  buffer: SharedArrayBuffer;
  /** Charges to make, each to the account hashed (keys[i % keys.length], 7). */
  charges: number;
  keys: number[];
  costMs: number;
  windowMs: number;
  /** Spins on this word of `go` until it is 1, so both threads start together. */
  go: SharedArrayBuffer;
}

const job = workerData as Job;
const table = new AccountTable(job.buffer);
const go = new Int32Array(job.go);
Atomics.add(go, 1, 1);
while (Atomics.load(go, 0) === 0);
const results = new Int32Array(job.charges);
for (let i = 0; i < job.charges; i++)
  results[i] = table.charge(job.keys[i % job.keys.length], 7, job.costMs, job.windowMs, 0);
parentPort!.postMessage(results, [results.buffer]);
