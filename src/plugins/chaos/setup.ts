// chaos [VERSION] [AUTHORS...]

import { hostname } from "node:os";
import type { Setup } from "../../setup/registry.ts";
import { chaos } from "./chaos.ts";
import { noBlock } from "../../corefile/args.ts";
import { VERSION } from "../../version.ts";

export const DEFAULT_VERSION = `clusterdns-${VERSION}`;
export const DEFAULT_AUTHORS = ["clusterdns"];

export const setup: Setup = (d) => {
  noBlock(d, "chaos");
  const [version, ...authors] = d.args.map((t) => fitTxt(t.text));
  return chaos({
    version: version ?? DEFAULT_VERSION,
    authors: authors.length > 0 ? [...new Set(authors)] : DEFAULT_AUTHORS,
    hostname: fitTxt(hostname() || "localhost"),
  });
};

/** A TXT string holds at most 255 bytes: cut longer text, as CoreDNS does. */
function fitTxt(s: string): string {
  if (Buffer.byteLength(s) <= 255) return s;
  let out = s;
  while (Buffer.byteLength(out) > 255) out = out.slice(0, -1);
  return out;
}
