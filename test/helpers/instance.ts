// A whole server instance in this process (no listener traffic needed): a Corefile set up, started,
// and waited for until every readiness check passes, for tests and benches that drive its pipelines.

import { join } from "node:path";
import { pino } from "pino";
import { parseCorefile } from "../../src/corefile/parser.ts";
import { Instance } from "../../src/server/instance.ts";
import { plugins } from "../../src/plugins/index.ts";

/** `corefile` as if read from DIR/Corefile (relative paths resolve against dir), started and ready. */
export async function readyInstance(corefile: string, dir: string): Promise<Instance> {
  const inst = await Instance.create({
    blocks: parseCorefile(corefile, join(dir, "Corefile")),
    root: dir,
    defaultPort: 0,
    log: pino({ level: "silent" }),
    plugins,
  });
  await inst.start();
  while (![...inst.readyChecks.values()].every((checks) => checks.every((c) => c()))) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return inst;
}
