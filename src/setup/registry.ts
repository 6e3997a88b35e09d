// The setup contract between plugins and the server: every plugin exports a Setup, the registry
// (src/plugins/index.ts) lists them in chain order, and main.ts hands it to the server.

import type { Directive } from "../corefile/types.ts";
import type { Plugin } from "../chain/handler.ts";
import type { SetupContext } from "./context.ts";

/** What src/plugins/<name>/setup.ts exports as `setup`. Returns undefined for directives that only
 * configure the server (bind, health, ready) and add no handler. */
export type Setup = (d: Directive, ctx: SetupContext) => Plugin | undefined | Promise<Plugin | undefined>;

/** Directive name -> setup, for every plugin a server can set up, in execution order: a query passes
 * through a block's handlers in the registry's order, whatever order the Corefile lists them in. A
 * directive the registry does not hold is an unknown directive. */
export type Registry = ReadonlyMap<string, Setup>;

/** For a directive whose every line in a server block joins one list that one handler serves
 * (rewrite's rules, template's templates, acl's rules): the first line's setup makes the handler over
 * the list, later lines only add to it. `lists` is the plugin's, keyed by the block. */
export function joinInBlock<T>(
  lists: WeakMap<object, T[]>,
  block: object,
  item: T,
  handler: (list: readonly T[]) => Plugin,
): Plugin | undefined {
  const list = lists.get(block);
  if (list) {
    list.push(item);
    return undefined;
  }
  const first = [item];
  lists.set(block, first);
  return handler(first);
}
