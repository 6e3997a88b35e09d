// Which account table an rrl block charges: the main thread makes it and hands its buffer to the
// worker threads (-workers N) through the relay (src/runtime/relay.ts) under the table's key, so that
// every thread charges the same accounts; a worker that starts later (or again) gets it as the relay's
// catch-up. A reload keeps the table (ctx.keep/adopt) when the block's rrl settings are the same, so a
// client over its limit stays limited across it; changed settings make a new, empty one.

import type { SetupContext } from "../../setup/context.ts";
import { relay } from "../../runtime/relay.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { AccountTable } from "./accounts.ts";
import type { RrlOptions } from "./limiter.ts";
import { liveTables } from "./stats.ts";

/** How long a worker's set-up waits for the main thread's table before it keeps one of its own. The
 * main thread posts it before it starts the workers or tells them to reload, so it is there at once. */
const WAIT_MS = 5000;

/** Per instance, how many blocks took a key so far: blocks alike in zones, port and settings (views of
 * one zone) get tables of their own, numbered in Corefile order in every thread. */
const taken = new WeakMap<object, Map<string, number>>();

/** The table of the block's rrl (settings `o`), this thread's share of it. */
export async function accountTable(ctx: SetupContext, o: RrlOptions): Promise<AccountTable> {
  const key = tableKey(ctx, o);
  const kept = ctx.adopt<AccountTable>(key);
  if (kept !== undefined) return kept;
  if (inWorker()) {
    const table = await fromMain(key, o.maxTable, () =>
      ctx
        .log("rrl")
        .error({ waitMs: WAIT_MS }, "the main thread's rrl accounts did not come: this thread keeps its own"),
    );
    ctx.keep(key, table, () => {});
    return table;
  }
  const table = AccountTable.create(o.maxTable);
  relay.out.provide(key, () => [table.buffer]);
  relay.out.post(key, table.buffer);
  liveTables.add(table);
  ctx.keep(key, table, () => {
    relay.out.withdraw(key);
    liveTables.delete(table);
  });
  return table;
}

function tableKey(ctx: SetupContext, o: RrlOptions): string {
  const base = `rrl ${ctx.block.port ?? ""} ${ctx.zones.join(",")} ${JSON.stringify(o)}`;
  let counts = taken.get(ctx.instance);
  if (counts === undefined) taken.set(ctx.instance, (counts = new Map()));
  const n = counts.get(base) ?? 0;
  counts.set(base, n + 1);
  return `${base} #${n}`;
}

/** The main thread's table under `key`, or after WAIT_MS (`late` says so) one of this thread's. */
function fromMain(key: string, slots: number, late: () => void): Promise<AccountTable> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      relay.in.unsubscribe(key);
      late();
      resolve(AccountTable.create(slots));
    }, WAIT_MS);
    relay.in.subscribe(key, (buffer) => {
      clearTimeout(timer);
      // Posted once: nothing more comes under the key.
      relay.in.unsubscribe(key);
      resolve(new AccountTable(buffer as SharedArrayBuffer));
    });
  });
}
