// nsid [DATA...]

import { hostname } from "node:os";
import type { Setup } from "../../setup/registry.ts";
import { nsid } from "./nsid.ts";
import { noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

/** An EDNS option's data is at most 65535 octets; an identifier is meant to be short. */
const MAX_NSID = 512;

export const setup: Setup = (d) => {
  noBlock(d, "nsid");
  // CoreDNS joins the words with spaces: `nsid Use The Force`.
  const text = d.args.length > 0 ? d.args.map((t) => t.text).join(" ") : hostname();
  const id = Buffer.from(text, "utf8");
  if (id.length > MAX_NSID)
    throw configError(d, "nsid", `the identifier is ${id.length} octets; at most ${MAX_NSID}`);
  return nsid(new Uint8Array(id));
};
