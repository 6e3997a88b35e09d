import { test } from "node:test";
import assert from "node:assert/strict";
import { cpuQuota } from "./cpu-quota.ts";

const files = (m: Record<string, string>) => (path: string) => {
  if (m[path] === undefined) throw new Error("ENOENT");
  return m[path];
};

test("the cgroup's CPU quota in cores, rounded up and never over the cores there are", () => {
  assert.equal(cpuQuota(files({ "/sys/fs/cgroup/cpu.max": "200000 100000\n" }), 8), 2);
  assert.equal(cpuQuota(files({ "/sys/fs/cgroup/cpu.max": "150000 100000\n" }), 8), 2);
  assert.equal(cpuQuota(files({ "/sys/fs/cgroup/cpu.max": "50000 100000\n" }), 8), 1);
  assert.equal(cpuQuota(files({ "/sys/fs/cgroup/cpu.max": "max 100000\n" }), 8), 8);
  assert.equal(cpuQuota(files({ "/sys/fs/cgroup/cpu.max": "800000 100000\n" }), 2), 2);
  const v1 = {
    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "300000\n",
    "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
  };
  assert.equal(cpuQuota(files(v1), 8), 3);
  assert.equal(cpuQuota(files({ ...v1, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n" }), 8), 8);
  assert.equal(cpuQuota(files({}), 4), 4);
});
