// whoami

import type { Setup } from "../../setup/registry.ts";
import { whoami } from "./whoami.ts";
import { argCount, noBlock } from "../../corefile/args.ts";

export const setup: Setup = (d) => {
  argCount(d, "whoami", 0, 0);
  noBlock(d, "whoami");
  return whoami;
};
