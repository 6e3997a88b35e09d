// The zones of one `auto` folder: every file (in the folder and below) whose name matches the regexp
// becomes a zone, its origin made from the template; a scan adds new files, reloads a file whose SOA
// serial changed (CoreDNS reloads on a new serial only) and drops the zones whose file is gone. A file
// that does not parse is logged and left out, and the zones loaded before keep serving.

import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { canonical, isSubdomain } from "../../dns/name.ts";
import { Zone } from "../file/zone.ts";
import { ZoneSet, fileStampSync } from "../file/file.ts";
import { loadZone } from "../file/zone-parser.ts";

export interface FolderOptions {
  dir: string;
  /** Matched against each file's name (not its path). */
  pattern: RegExp;
  /** The origin, with {1}, {2}... standing for the pattern's groups. */
  template: string;
  /** The stanza's zones: origins outside them are left out. */
  zones: readonly string[];
  log: Logger;
}

interface Loaded {
  path: string;
  stamp: string;
  zone: Zone;
}

export class ZoneFolder {
  readonly set = new ZoneSet([]);
  readonly #o: FolderOptions;
  readonly #loaded = new Map<string, Loaded>();
  /** Files already reported as broken, by stamp: each version is reported once. */
  readonly #broken = new Map<string, string>();

  constructor(o: FolderOptions) {
    this.#o = o;
  }

  /** Reads the folder; true when the zones served changed. Never throws. */
  scan(): boolean {
    const found = new Map<string, string>();
    for (const path of this.#files(this.#o.dir)) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      const m = this.#o.pattern.exec(name);
      if (m === null) continue;
      const origin = canonical(this.#o.template.replace(/\{(\d+)\}/g, (_, i: string) => m[Number(i)] ?? ""));
      if (!this.#o.zones.some((z) => isSubdomain(origin, z))) continue;
      if (found.has(origin)) {
        this.#o.log.warn(
          { zone: origin, file: path, also: found.get(origin) },
          "two files for one zone; the first is served",
        );
        continue;
      }
      found.set(origin, path);
    }
    let changed = false;
    for (const [origin, old] of this.#loaded) {
      if (found.get(origin) === old.path) continue;
      this.#loaded.delete(origin);
      this.#o.log.info({ zone: origin, file: old.path }, "zone file gone: zone dropped");
      changed = true;
    }
    for (const [origin, path] of found) changed = this.#load(origin, path) || changed;
    if (changed) this.set.replace([...this.#loaded.values()].map((l) => l.zone));
    return changed;
  }

  /** Loads the file for `origin` when it is new or changed; true when the zone served changed. */
  #load(origin: string, path: string): boolean {
    const stamp = fileStampSync(path);
    const old = this.#loaded.get(origin);
    if (old?.stamp === stamp || this.#broken.get(path) === stamp) return false;
    let zone: Zone;
    try {
      zone = new Zone(origin, loadZone(path, origin));
    } catch (err) {
      this.#broken.set(path, stamp);
      this.#o.log.error(
        { zone: origin, err: (err as Error).message },
        old ? "zone reload failed; serving the zone loaded before" : "zone file left out: it does not load",
      );
      return false;
    }
    this.#broken.delete(path);
    const serial = zone.serial;
    if (old !== undefined && old.zone.serial === serial) {
      // As CoreDNS: a zone is reloaded when its serial changes.
      this.#o.log.warn(
        { zone: origin, file: path, serial },
        "zone file changed without a new SOA serial; not reloaded",
      );
      old.stamp = stamp;
      return false;
    }
    this.#loaded.set(origin, { path, stamp, zone });
    this.#o.log.info({ zone: origin, file: path, serial }, old ? "zone reloaded" : "zone loaded");
    return true;
  }

  /** Every file in `dir` and below, sorted; a folder that cannot be read holds none. */
  #files(dir: string): string[] {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const n of names) {
      const path = join(dir, n);
      const st = statOrUndefined(path);
      if (st?.isDirectory()) out.push(...this.#files(path));
      else if (st?.isFile()) out.push(path);
    }
    return out;
  }
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
