// Assertions on what a plugin's setup throws for a bad directive: a ConfigError (code CDNS_ERR_CONFIG)
// whose message starts with the directive's file:line.

import assert from "node:assert/strict";
import type { Directive } from "../../src/corefile/types.ts";
import type { Setup } from "../../src/setup/registry.ts";
import type { SetupContext } from "../../src/setup/context.ts";
import { fakeContext } from "./setup-context.ts";

/** A validator for assert.rejects: a ConfigError whose message matches `re`. */
export function configErrorLike(re: RegExp): (err: unknown) => true {
  return (err) => {
    assert.equal((err as { code?: unknown }).code, "CDNS_ERR_CONFIG", `not a ConfigError: ${String(err)}`);
    assert.match((err as Error).message, re);
    return true;
  };
}

/** Asserts that `setup` rejects each directive with a ConfigError matching its pattern, each case in a
 * fresh context from `ctx`. */
export async function assertConfigErrors(
  setup: Setup,
  cases: [Directive, RegExp][],
  ctx: () => SetupContext = () => fakeContext().ctx,
): Promise<void> {
  for (const [d, re] of cases) await assert.rejects(async () => setup(d, ctx()), configErrorLike(re));
}
