// sign DBFILE [ZONES...] {
//     key file|directory KEY...|DIR...
//     directory DIR
// }
// Signs the zones of DBFILE into DIR/db.<zone>.signed, at start-up (before any query, so that the
// block's `file` serves the signed file from the first one; a dry run writes nothing) and then
// whenever resignReason says so, checked every hour. It adds no handler: `file` serves what it writes.

import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, noBlock, onceEach, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { KeyFileError, readKeyPair, type SigningKey } from "../../dnssec/keys.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { resignReason, signInto, signedPath, type ZoneJob } from "./resign.ts";
import { offerSigner } from "./signers.ts";
import { loadZone } from "../file/zone-parser.ts";

const NAME = "sign";
/** CoreDNS's default output folder. */
const DEFAULT_DIRECTORY = "/var/lib/coredns";
const CHECK_MS = 3600_000;

export const setup: Setup = (d, ctx) => {
  argCount(d, NAME, 1, Infinity);
  const source = resolve(ctx.root, d.args[0].text);
  const origins = zonesArg(d.args.slice(1), ctx.zones, NAME);
  const keyPaths: { path: string; token: (typeof d.args)[0] }[] = [];
  const keyDirs: { dir: string; token: (typeof d.args)[0] }[] = [];
  let directory = DEFAULT_DIRECTORY;
  const once = onceEach(NAME);
  blockOptions(d, NAME, {
    key(opt) {
      argCount(opt, NAME, 2, Infinity);
      noBlock(opt, NAME);
      const how = opt.args[0].text;
      if (how !== "file" && how !== "directory")
        throw configError(
          opt.args[0],
          NAME,
          `unknown key source '${how}': use 'key file' or 'key directory'`,
        );
      for (const t of opt.args.slice(1)) {
        const path = resolve(ctx.root, t.text);
        if (how === "file") keyPaths.push({ path, token: t });
        else keyDirs.push({ dir: path, token: t });
      }
    },
    directory(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      noBlock(opt, NAME);
      directory = resolve(ctx.root, opt.args[0].text);
    },
  });
  if (keyPaths.length === 0 && keyDirs.length === 0)
    throw configError(d, NAME, "no keys: give them with 'key file KEY...' or 'key directory DIR...'");

  const jobs: ZoneJob[] = origins.map((origin) => {
    const keys: SigningKey[] = [];
    const read = (path: string, token: (typeof d.args)[0]) => {
      try {
        keys.push(readKeyPair(path));
      } catch (err) {
        if (err instanceof KeyFileError) throw configError(token, NAME, err.message);
        throw err;
      }
    };
    for (const k of keyPaths) read(k.path, k.token);
    // `key directory`: the zone's K<zone>+<alg>+<tag> pairs in each folder (CoreDNS documents it
    // and leaves it unimplemented).
    const prefix = `K${origin === "." ? "" : origin.slice(0, -1)}.+`;
    for (const k of keyDirs) {
      let names: string[];
      try {
        names = readdirSync(k.dir);
      } catch (err) {
        throw configError(k.token, NAME, `${k.dir}: ${(err as NodeJS.ErrnoException).code}`);
      }
      for (const n of names.filter(
        (f) => f.toLowerCase().startsWith(prefix.toLowerCase()) && f.endsWith(".key"),
      ))
        read(join(k.dir, n), k.token);
    }
    if (keys.length === 0) throw configError(d, NAME, `no key for the zone ${origin}`);
    return { origin, source, output: signedPath(directory, origin), keys };
  });

  // One thread signs: with -workers N the others serve what it writes.
  if (inWorker()) return undefined;
  // A zone file that does not parse is found here, so -validate reports it; the signing itself waits
  // for start-up, so a dry run writes nothing.
  for (const job of jobs) {
    try {
      loadZone(job.source, job.origin);
    } catch (err) {
      throw configError(d, NAME, `${job.origin}: ${(err as Error).message}`);
    }
  }
  const log = ctx.log(NAME);
  const signIfDue = (job: ZoneJob, atStartup: boolean) => {
    const now = Math.floor(Date.now() / 1000);
    try {
      const reason = resignReason(job, now);
      if (reason === undefined) return;
      const started = performance.now();
      const serial = signInto(job, now);
      log.info(
        {
          zone: job.origin,
          file: job.output,
          serial,
          keyTags: job.keys.map((k) => k.tag),
          ms: Math.round(performance.now() - started),
        },
        `zone signed: ${reason}`,
      );
    } catch (err) {
      // At start-up a zone that cannot be signed stops the server; later the old file keeps serving.
      if (atStartup) throw configError(d, NAME, `${job.origin}: ${(err as Error).message}`);
      log.error(
        { zone: job.origin, err: (err as Error).message },
        "signing failed; the signed file is left as it was",
      );
    }
  };
  for (const job of jobs) offerSigner(ctx.block.shared, job.output, () => signIfDue(job, true));
  let timer: NodeJS.Timeout | undefined;
  ctx.onStartup(() => {
    for (const job of jobs) signIfDue(job, true);
    timer = setInterval(() => jobs.forEach((job) => signIfDue(job, false)), CHECK_MS);
    timer.unref();
  });
  ctx.onShutdown(() => clearInterval(timer));
  return undefined;
};
