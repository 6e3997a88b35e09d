// The one handler that directives joined per server block make (rewrite, template, acl): each
// directive set up in turn in one block's context, the first making the handler, the others adding
// to its list.

import assert from "node:assert/strict";
import type { Handler } from "../../src/chain/handler.ts";
import type { Setup } from "../../src/setup/registry.ts";
import type { Directive } from "../../src/corefile/types.ts";
import { fakeContext, type FakeContext, type FakeContextOptions } from "./setup-context.ts";

export async function blockHandler(
  setup: Setup,
  next: Handler,
  ds: Directive[],
  o: FakeContextOptions = {},
): Promise<{ h: Handler; f: FakeContext }> {
  const f = fakeContext(o);
  const plugins = [];
  for (const d of ds) plugins.push(await setup(d, f.ctx));
  assert.ok(plugins[0], "the first directive makes the handler");
  assert.ok(
    plugins.slice(1).every((p) => p === undefined),
    "later ones add to it",
  );
  return { h: plugins[0](next), f };
}
