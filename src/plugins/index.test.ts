import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { plugins } from "./index.ts";
import { NOT_SUPPORTED } from "./not-supported.ts";
import { COREDNS_PLUGINS } from "../compat/coredns.ts";

const HERE = import.meta.dirname;

// The relative order of the plugins in CoreDNS's plugin.cfg (the ones CoreDNS ships), which a Corefile
// written for CoreDNS relies on: a query passes errors, log, cache, ... in this order.
const COREDNS_ORDER = COREDNS_PLUGINS.map((p) => p.plugin);

test("every plugin folder is in the registry and every registered plugin has a folder", () => {
  const folders = readdirSync(HERE, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  assert.deepEqual([...plugins.keys()].sort(), folders);
  for (const name of folders) {
    assert.ok(existsSync(join(HERE, name, "setup.ts")), `${name}/setup.ts`);
    assert.ok(existsSync(join(HERE, name, "README.md")), `${name}/README.md`);
  }
});

test("plugins CoreDNS also has run in CoreDNS's order", () => {
  const ours = [...plugins.keys()].filter((name) => COREDNS_ORDER.includes(name));
  const theirs = COREDNS_ORDER.filter((name) => plugins.has(name));
  assert.deepEqual(ours, theirs);
});

test("every plugin of CoreDNS's plugin.cfg is either registered or named as not supported, not both", () => {
  for (const name of COREDNS_ORDER) {
    assert.ok(
      plugins.has(name) || NOT_SUPPORTED.has(name),
      `${name}: registered or missing in src/compat/coredns.ts`,
    );
  }
  for (const name of NOT_SUPPORTED)
    assert.ok(!plugins.has(name), `${name} is registered: give it its verdict in src/compat/coredns.ts`);
});
