import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { plugins } from "./index.ts";
import { NOT_SUPPORTED } from "./not-supported.ts";
import { COREDNS_PLUGINS } from "../compat/coredns.ts";
import { modulesLoaded } from "../../test/helpers/modules-loaded.ts";

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

test("a Corefile loads the modules of the plugins it names and of what they import, no others", async () => {
  // kubeadm's Corefile: its ten plugins, and file, metadata and transfer, which kubernetes and
  // forward import. dnssec, etcd, grpc, insights, trace and the other 34 stay unloaded.
  const { resolved, builtins } = await modulesLoaded(
    readFileSync(join(HERE, "..", "..", "Corefile.example"), "utf8"),
  );
  const used = [
    ...new Set(resolved.flatMap(({ url }) => /\/src\/plugins\/([^/]+)\//.exec(url)?.[1] ?? [])),
  ].sort();
  const kubeadm = ["cache", "errors", "forward", "health", "kubernetes", "loadbalance", "loop"];
  const imported = ["file", "metadata", "transfer"];
  assert.deepEqual(used, [...kubeadm, "prometheus", "ready", "reload", ...imported].sort());
  // Nor Node's HTTP/2 (DoH and gRPC only) or fetch (src/http/node-http.ts).
  assert.deepEqual(
    builtins.filter((b) => b === "http2" || b === "internal/deps/undici/undici"),
    [],
  );
});
