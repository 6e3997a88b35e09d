// Bytes a Node process allocates on its JS heap over a window of load, read from outside the code
// under test: the process runs with --trace-gc-nvp, and V8 prints a line per collection, stamped with
// the ms since the isolate started, whose `allocated=N` is what was allocated since the previous
// collection ended (its start_object_size less the previous one's end_object_size: young and old
// generation alike, so also what V8 pretenures straight into the old generation).
//
// The collections inside the window are summed, except the first: it also counts what came before the
// window (a server's start can allocate a lot after its last collection). The load's time outside the
// span from the first collection to the last (its length from dnsperf's own run time, so the idle ms
// of starting and ending dnsperf are not counted) is filled in at the rate of that span, and reported
// as the measure's uncertainty. The window's ends are placed on the isolate's clock by the lines'
// arrival: a line is read a moment after V8 prints it, so the smallest difference between arrival and
// stamp is the offset between the clocks.
// Each isolate (the main thread, every worker thread) collects on its own and stamps its lines on its
// own clock, so the lines are read per isolate (the "[pid:0xADDRESS:N]" tag V8 prefixes) and the
// isolates' allocations summed.
// Buffers' backing stores live outside the JS heap (malloc) and are not counted; their JS objects are.
// bench/alloc-check.ts checks the method on a toy server that allocates a known amount per query.

/** The node flag that prints the trace this file reads. */
export const GC_TRACE_FLAG = "--trace-gc-nvp";

export interface Allocation {
  /** Bytes allocated on the JS heap in the window: an upper bound when fewer than 2 collections ran. */
  bytes: number;
  /** Of `bytes`, what the edges' extrapolation added (with 2 or more collections). */
  extrapolated: number;
  /** Collections that ended inside the window, and of them the full ones (mark-compact). */
  collections: number;
  full: number;
  /** False when too few collections ran in the window to read a rate (fewer than 3, or spanning less
   * than half the load): `bytes` is then only a bound, what they reported plus the young generation's
   * capacity. */
  measured: boolean;
}

interface Collection {
  /** Stamp: ms since the isolate started. */
  at: number;
  /** When its line was read, on this process's performance.now() clock. */
  read: number;
  allocated: number;
  youngCapacity: number;
  full: boolean;
}

const LINE = /\s(\d+) ms: pause=.* allocated=(\d+) /;

const ISOLATE = /^\[\d+:(0x[0-9a-f]+)/;

/** The allocation the trace lines (with the times they were read) report for a load that ran
 * `loadMs` inside the window [from, to] of performance.now(), summed over the process's isolates. */
export function allocatedIn(
  lines: readonly string[],
  times: readonly number[],
  from: number,
  to: number,
  loadMs: number,
): Allocation {
  const byIsolate = new Map<string, Collection[]>();
  lines.forEach((line, i) => {
    const m = LINE.exec(line);
    if (m === null) return;
    const youngCapacity = Number(/ new_space_capacity=(\d+)/.exec(line)?.[1] ?? 0);
    const full = line.includes(" gc=mc ");
    const isolate = ISOLATE.exec(line)?.[1] ?? "";
    if (!byIsolate.has(isolate)) byIsolate.set(isolate, []);
    byIsolate
      .get(isolate)!
      .push({ at: Number(m[1]), read: times[i], allocated: Number(m[2]), youngCapacity, full });
  });
  const total: Allocation = {
    bytes: 0,
    extrapolated: 0,
    collections: 0,
    full: 0,
    measured: byIsolate.size > 0,
  };
  for (const all of byIsolate.values()) {
    const a = isolateAllocation(all, { from, to, loadMs });
    total.bytes += a.bytes;
    total.extrapolated += a.extrapolated;
    total.collections += a.collections;
    total.full += a.full;
    total.measured &&= a.measured;
  }
  return total;
}

/** One isolate's allocation in the window, from its collections. */
function isolateAllocation(all: Collection[], w: { from: number; to: number; loadMs: number }): Allocation {
  const { from, to, loadMs } = w;
  if (all.length === 0) return { bytes: 0, extrapolated: 0, collections: 0, full: 0, measured: false };
  const offset = Math.min(...all.map((c) => c.read - c.at));
  const start = from - offset;
  const end = to - offset;
  const inside = all.filter((c) => c.at > start && c.at <= end);
  const counts = { collections: inside.length, full: inside.filter((c) => c.full).length };
  const span = inside.length === 0 ? 0 : inside.at(-1)!.at - inside[0].at;
  if (inside.length < 3 || span < loadMs / 2) {
    const bytes = inside.reduce((n, c) => n + c.allocated, 0) + all.at(-1)!.youngCapacity;
    return { bytes, extrapolated: 0, ...counts, measured: false };
  }
  const between = inside.slice(1).reduce((n, c) => n + c.allocated, 0);
  const extrapolated = (between / span) * Math.max(0, loadMs - span);
  return { bytes: between + extrapolated, extrapolated, ...counts, measured: true };
}
