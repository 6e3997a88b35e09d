import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { promisify } from "node:util";
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

test("a Corefile loads the modules of the plugins it names and of what they import, no others", async () => {
  // kubeadm's Corefile: its ten plugins, and file, metadata and transfer, which kubernetes and
  // forward import. dnssec, etcd, grpc, insights, trace and the other 34 stay unloaded.
  const probe = `
    import { registerHooks } from "node:module";
    import { readFileSync } from "node:fs";
    const loaded = new Set();
    registerHooks({
      resolve(spec, ctx, next) {
        const r = next(spec, ctx);
        const m = /\\/src\\/plugins\\/([^/]+)\\//.exec(r.url);
        if (m) loaded.add(m[1]);
        return r;
      },
    });
    const src = ${JSON.stringify(new URL("../", import.meta.url).href)};
    const { plugins } = await import(src + "plugins/index.ts");
    const { parseCorefile } = await import(src + "corefile/parser.ts");
    const { Instance } = await import(src + "server/instance.ts");
    const { pino } = await import("pino");
    const text = readFileSync(new URL("../Corefile.example", src), "utf8");
    await Instance.create({
      blocks: parseCorefile(text, "Corefile.example"),
      plugins, root: "/", defaultPort: 0, log: pino({ level: "silent" }), checkOnly: true,
    });
    const builtins = ["http2", "internal/deps/undici/undici"].filter((b) =>
      process.moduleLoadList.includes("NativeModule " + b));
    console.log(JSON.stringify({ plugins: [...loaded].sort(), builtins }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", probe], {
    cwd: join(HERE, "..", ".."),
    timeout: 60_000,
  });
  const kubeadm = ["cache", "errors", "forward", "health", "kubernetes", "loadbalance", "loop"];
  const imported = ["file", "metadata", "transfer"];
  const { plugins: used, builtins } = JSON.parse(stdout) as { plugins: string[]; builtins: string[] };
  assert.deepEqual(used, [...kubeadm, "prometheus", "ready", "reload", ...imported].sort());
  // Nor Node's HTTP/2 (DoH and gRPC only) or fetch (src/http/node-http.ts).
  assert.deepEqual(builtins, []);
});
