// How many cores this process may use: the cgroup's CPU quota (what Go's GOMAXPROCS follows, so what a
// CoreDNS pod with the same limit would use), else the cores it may run on. `-workers auto` and
// `multisocket` without a number take it.

import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

type Read = (path: string) => string;

/** Cores the quota allows, rounded up (a 1.5-core limit uses 2), never more than the cores there are. */
export function cpuQuota(
  read: Read = (p) => readFileSync(p, "utf8"),
  cores = availableParallelism(),
): number {
  const quota = quotaCores(read);
  return Math.max(1, Math.min(cores, quota === undefined ? cores : Math.ceil(quota)));
}

/** The quota in cores (fractional), or undefined when there is none. */
function quotaCores(read: Read): number | undefined {
  const text = (path: string) => {
    try {
      return read(path).trim();
    } catch {
      return undefined;
    }
  };
  // cgroup v2: "QUOTA PERIOD" in microseconds, QUOTA "max" for none.
  const v2 = text("/sys/fs/cgroup/cpu.max");
  if (v2 !== undefined) {
    const [quota, period] = v2.split(/\s+/);
    return ratio(quota, period ?? "100000");
  }
  // cgroup v1: cfs_quota_us is -1 for none.
  const quota =
    text("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ?? text("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us");
  const period =
    text("/sys/fs/cgroup/cpu/cpu.cfs_period_us") ?? text("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us");
  return quota === undefined ? undefined : ratio(quota, period ?? "100000");
}

function ratio(quota: string, period: string): number | undefined {
  if (!/^\d+$/.test(quota) || !/^\d+$/.test(period) || Number(period) === 0) return undefined;
  return Number(quota) / Number(period);
}
