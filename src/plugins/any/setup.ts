// any

import type { Setup } from "../../setup/registry.ts";
import { any } from "./any.ts";
import { argCount, noBlock } from "../../corefile/args.ts";

export const setup: Setup = (d) => {
  argCount(d, "any", 0, 0);
  noBlock(d, "any");
  return any;
};
