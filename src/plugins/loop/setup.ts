// loop

import type { Setup } from "../../setup/registry.ts";
import { Loop } from "./loop.ts";
import { argCount, noBlock } from "../../corefile/args.ts";

export const setup: Setup = (d, ctx) => {
  argCount(d, "loop", 0, 0);
  noBlock(d, "loop");
  const loop = new Loop(ctx.zones[0], ctx.log("loop"));
  ctx.onListening((at) => loop.probe(at));
  return (next) => loop.handler(next);
};
