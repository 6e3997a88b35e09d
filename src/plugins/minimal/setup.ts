// minimal

import type { Setup } from "../../setup/registry.ts";
import { minimal } from "./minimal.ts";
import { argCount, noBlock } from "../../corefile/args.ts";

export const setup: Setup = (d) => {
  argCount(d, "minimal", 0, 0);
  noBlock(d, "minimal");
  return minimal;
};
