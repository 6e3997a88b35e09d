import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { plugins } from "./index.ts";
import { NOT_SUPPORTED } from "./not-supported.ts";

/** The rows of the README's CoreDNS compatibility table: plugin -> status. */
function compatibilityTable(): Map<string, string> {
  const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
  const section = /^## CoreDNS compatibility\n([\s\S]*?)^## /m.exec(readme)?.[1];
  assert.ok(section, "the README has a CoreDNS compatibility section");
  const rows = new Map<string, string>();
  for (const m of section.matchAll(/^\| `([a-z0-9_]+)` \|[^|]*\| ([^|]+) \|$/gm)) {
    assert.ok(!rows.has(m[1]), `${m[1]} has one row`);
    rows.set(m[1], m[2]);
  }
  return rows;
}

test("the README's CoreDNS compatibility table has a true row for every plugin, and no other", () => {
  const rows = compatibilityTable();
  const named = [...plugins.keys(), ...NOT_SUPPORTED];
  assert.deepEqual([...rows.keys()].sort(), named.sort());
  for (const name of plugins.keys()) assert.match(rows.get(name)!, /^supported/, `${name} is registered`);
  for (const name of NOT_SUPPORTED) assert.match(rows.get(name)!, /^not supported/, `${name} is not`);
});
