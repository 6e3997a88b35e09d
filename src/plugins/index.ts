// Directive name -> setup. A directive listed in src/corefile/order.ts but missing here is parsed but
// rejected at start-up as "not built yet", with file:line.

import type { Setup } from "../plugin.ts";
import { setup as autopath } from "./autopath/setup.ts";
import { setup as bind } from "./bind/setup.ts";
import { setup as cache } from "./cache/setup.ts";
import { setup as chaos } from "./chaos/setup.ts";
import { setup as errors } from "./errors/setup.ts";
import { setup as file } from "./file/setup.ts";
import { setup as forward } from "./forward/setup.ts";
import { setup as health } from "./health/setup.ts";
import { setup as hosts } from "./hosts/setup.ts";
import { setup as kubernetes } from "./kubernetes/setup.ts";
import { setup as loadbalance } from "./loadbalance/setup.ts";
import { setup as log } from "./log/setup.ts";
import { setup as loop } from "./loop/setup.ts";
import { setup as prometheus } from "./prometheus/setup.ts";
import { setup as ready } from "./ready/setup.ts";
import { setup as reload } from "./reload/setup.ts";
import { setup as rewrite } from "./rewrite/setup.ts";
import { setup as template } from "./template/setup.ts";
import { setup as whoami } from "./whoami/setup.ts";

export const setups: ReadonlyMap<string, Setup> = new Map<string, Setup>([
  ["autopath", autopath],
  ["bind", bind],
  ["cache", cache],
  ["chaos", chaos],
  ["errors", errors],
  ["file", file],
  ["forward", forward],
  ["health", health],
  ["hosts", hosts],
  ["kubernetes", kubernetes],
  ["loadbalance", loadbalance],
  ["log", log],
  ["loop", loop],
  ["prometheus", prometheus],
  ["ready", ready],
  ["reload", reload],
  ["rewrite", rewrite],
  ["template", template],
  ["whoami", whoami],
]);
