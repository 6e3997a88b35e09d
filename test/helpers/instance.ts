// A whole server instance in this process (no listener traffic needed): a Corefile set up, started,
// and waited for until every readiness check passes, for tests and benches that drive its pipelines.

import { join } from "node:path";
import { pino } from "pino";
import { parseCorefile } from "../../src/corefile/parser.ts";
import { Instance } from "../../src/server/instance.ts";
import { plugins } from "../../src/plugins/index.ts";

/** `corefile` as if read from DIR/Corefile (relative paths resolve against dir), set up. */
function setUp(corefile: string, dir: string, previous?: Instance): Promise<Instance> {
  return Instance.create({
    blocks: parseCorefile(corefile, join(dir, "Corefile")),
    root: dir,
    defaultPort: 0,
    log: pino({ level: "silent" }),
    plugins,
    takesOver: previous !== undefined,
    previous,
  });
}

/** `corefile` reloaded in place of `current`, as the reloader does: set up beside it, then taking
 * over once ready. */
export async function reloadedInstance(current: Instance, corefile: string, dir: string): Promise<Instance> {
  const next = await setUp(corefile, dir, current);
  await next.takeOver(current, { readyWaitMs: 5000 });
  return next;
}

/** `corefile` as if read from DIR/Corefile (relative paths resolve against dir), started, ready or not
 * (its kubernetes plugin may still wait for the first sync). */
export async function startedInstance(corefile: string, dir: string): Promise<Instance> {
  const inst = await setUp(corefile, dir);
  await inst.start();
  return inst;
}

/** `corefile` as if read from DIR/Corefile (relative paths resolve against dir), started and ready. */
export async function readyInstance(corefile: string, dir: string): Promise<Instance> {
  const inst = await setUp(corefile, dir);
  await inst.start();
  while (![...inst.readyChecks.values()].every((checks) => checks.every((c) => c()))) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return inst;
}
