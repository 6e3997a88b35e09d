// What a server set up from a Corefile loads: a child process with a module resolve hook sets up an
// Instance (checkOnly: nothing listens) and reports every module resolved, and which of Node's own
// modules it loaded. Tests hold the lazy imports to account with it: a plugin, package or built-in
// that a Corefile does not use must not be loaded.

import { execFile } from "node:child_process";
import { promisify } from "node:util";

export interface Loaded {
  /** Every module resolved: the specifier asked and the URL it resolved to. */
  resolved: { spec: string; url: string }[];
  /** Node's built-in modules loaded ("http2", "internal/deps/undici/undici", ...). */
  builtins: string[];
}

const SRC = new URL("../../src/", import.meta.url).href;

const PROBE = `
  import { registerHooks } from "node:module";
  const resolved = [];
  registerHooks({
    resolve(spec, ctx, next) {
      const r = next(spec, ctx);
      resolved.push({ spec, url: r.url });
      return r;
    },
  });
  const src = ${JSON.stringify(SRC)};
  const { plugins } = await import(src + "plugins/index.ts");
  const { parseCorefile } = await import(src + "corefile/parser.ts");
  const { Instance } = await import(src + "server/instance.ts");
  const { pino } = await import("pino");
  await Instance.create({
    blocks: parseCorefile(process.env.COREFILE, "Corefile"),
    plugins, root: "/", defaultPort: 0, log: pino({ level: "silent" }), checkOnly: true,
  });
  const builtins = process.moduleLoadList
    .filter((m) => m.startsWith("NativeModule "))
    .map((m) => m.slice("NativeModule ".length));
  console.log(JSON.stringify({ resolved, builtins }));`;

/** What setting up `corefile` loads, in a process of its own. */
export async function modulesLoaded(corefile: string): Promise<Loaded> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", PROBE], {
    cwd: new URL("../../", import.meta.url).pathname,
    env: { ...process.env, COREFILE: corefile },
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Loaded;
}
