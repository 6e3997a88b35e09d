// root PATH
//
// Sets the folder the block's other directives read relative paths from (zone files, hosts files,
// kubeconfig, ...). It is first in the registry, so it is set up before any of them. A relative PATH
// is itself read from the Corefile's folder, as every other relative path here.

import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";

/** The blocks that have a root line already. */
const seen = new WeakSet<object>();

export const setup: Setup = (d, ctx) => {
  argCount(d, "root", 1, 1);
  noBlock(d, "root");
  // CoreDNS keeps the last line; a line that would be lost is refused instead.
  if (seen.has(ctx.block)) throw configError(d, "root", "given twice in this server block: keep one");
  seen.add(ctx.block);
  const dir = resolve(ctx.root, d.args[0].text);
  let isDir: boolean | undefined;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code !== "ENOENT") throw configError(d.args[0], "root", `cannot read '${dir}': ${code}`);
  }
  if (isDir === false) throw configError(d.args[0], "root", `'${dir}' is not a folder`);
  // As CoreDNS: a folder that does not exist is allowed (it may be mounted later), but said.
  if (isDir === undefined) {
    ctx.log("root").warn({ at: `${d.file}:${d.line}`, root: dir }, "the root folder does not exist (yet)");
  }
  ctx.root = dir;
  return undefined;
};
