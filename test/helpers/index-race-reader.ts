// A reader thread for src/offheap/shared-index.test.ts: reads the writer's two tables for a bounded
// time and counts the reads that saw them disagree. In every write section the writer puts the same
// generation ("g12;") under "g" in table "a" and in table "b", and under "filler" that generation
// repeated a varying number of times, so entries of many sizes are freed and reused while this thread
// reads: a filler that is not one unit repeated was read from a block reused under the reader.

import { parentPort, workerData } from "node:worker_threads";
import { IndexReader } from "../../src/offheap/shared-index.ts";
import type { ArenaHandle } from "../../src/offheap/arena.ts";
import type { Codec } from "../../src/offheap/table.ts";

interface Job {
  handle: ArenaHandle;
  slot: number;
  ms: number;
  /** Read without a read section around the two gets (each get then opens its own). */
  unguarded: boolean;
}

const text: Codec<string> = { write: (w, v) => w.str(v), read: (r) => r.str() };
const job = workerData as Job;
const index = new IndexReader(job.handle, job.slot);
const a = index.table("a", text);
const b = index.table("b", text);
let reads = 0;
let torn = 0;
let malformed = 0;
// Whether the last run of check() read a bad filler. A run the read section throws away (the writer
// moved meanwhile) may have: the buffer may have grown past this thread's views while it read, and
// what lies past them reads short. What read() returns must never be.
let bad = false;
const check = () => {
  const ga = a.get("g");
  const gb = b.get("g");
  const filler = b.get("filler") ?? "";
  const unit = filler.slice(0, filler.indexOf(";") + 1);
  bad = !/^g\d+;$/.test(unit) || filler !== unit.repeat(filler.length / unit.length);
  return ga === gb;
};
const end = Date.now() + job.ms;
while (Date.now() < end) {
  reads++;
  if (!(job.unguarded ? check() : index.read(check))) torn++;
  if (bad) malformed++;
}
parentPort!.postMessage({ reads, torn, malformed, retried: index.retried, givenUp: index.givenUp });
