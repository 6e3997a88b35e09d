// The file handler: answers queries inside its zones from RFC 1035 zone files, and a poller that
// reloads a zone file when it changes on disk.

import { statSync, type Stats } from "node:fs";
import { stat } from "node:fs/promises";
import type { Logger } from "pino";
import type { Handler, Plugin } from "../../chain/handler.ts";
import { failure } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import { replyTo, type Msg } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { LOOKED_UP_SECONDS } from "../../answers/policy.ts";
import { Zone } from "./zone.ts";
import { loadZone } from "./zone-parser.ts";
import type { Transferer, ZoneChange } from "../transfer/transferer.ts";
import { Journal } from "./journal.ts";

/** The zones one `file` directive serves, replaced as a whole when the file is reloaded, with each
 * zone's journal of changes (for IXFR). */
export class ZoneSet {
  #zones: readonly Zone[] = [];
  readonly #journals = new Map<string, Journal>();

  constructor(zones: readonly Zone[]) {
    this.replace(zones);
  }

  /** Longest origin first, so that the first match is the most specific zone. */
  replace(zones: readonly Zone[]): void {
    const old = new Map(this.#zones.map((z) => [z.origin, z]));
    for (const z of zones) {
      const before = old.get(z.origin);
      if (before === undefined || before === z) continue;
      let journal = this.#journals.get(z.origin);
      if (journal === undefined) this.#journals.set(z.origin, (journal = new Journal()));
      journal.record(before, z);
    }
    for (const origin of this.#journals.keys()) {
      if (!zones.some((z) => z.origin === origin)) this.#journals.delete(origin);
    }
    this.#zones = [...zones].sort((a, b) => b.origin.length - a.origin.length);
  }

  /** The changes that lead from `serial` to `zone` (one of this set's), if its journal holds them. */
  changes(zone: Zone, serial: number): readonly ZoneChange[] | undefined {
    return this.#journals.get(zone.origin)?.since(serial, zone.soa);
  }

  get zones(): readonly Zone[] {
    return this.#zones;
  }

  /** The most specific zone that holds `qname`, if any. */
  match(qname: string): Zone | undefined {
    for (const z of this.#zones) if (isSubdomain(qname, z.origin)) return z;
    return undefined;
  }
}

/** Parses the file at `path` once for each origin. Throws ZoneError. */
export function loadZones(path: string, origins: readonly string[]): Zone[] {
  return origins.map((origin) => new Zone(origin, loadZone(path, origin)));
}

/** The zones as a source of zone transfers (transfer plugin). */
export function fileTransferer(zones: ZoneSet): Transferer {
  return {
    name: "file",
    zones: () => zones.zones.map((z) => z.origin),
    transfer(origin) {
      const zone = zones.zones.find((z) => z.origin === origin);
      return (
        zone && {
          soa: zone.soa,
          records: () => zone.transferRecords(),
          changes: (serial) => zones.changes(zone, serial),
        }
      );
    },
  };
}

/** A lookup through the server itself (SetupContext.lookup). */
export type Lookup = (name: string, qtype: number, depth?: number, deadline?: number) => Promise<Msg>;

export interface FileOptions {
  /** Resolves CNAME targets outside the zone through the server. */
  lookup?: Lookup;
  /** `fallthrough` zones (canonical), or undefined without it. */
  fallthrough?: readonly string[];
}

export function filePlugin(zones: ZoneSet, o: FileOptions = {}): Plugin {
  return (next) => fileHandler(zones, next, o);
}

export function fileHandler(zones: ZoneSet, next: Handler, o: FileOptions = {}): Handler {
  return {
    name: "file",
    serve(req) {
      const zone = zones.match(req.qname);
      if (!zone) return next.serve(req);
      req.answeredBy = "file";
      const reply = answerFromZone(req, zone);
      if (noRecords(reply) && o.fallthrough?.some((z) => isSubdomain(req.qname, z))) return next.serve(req);
      return chaseOutside(req, zone, reply, o.lookup);
    },
  };
}

/** The zone has nothing for the question: NXDOMAIN, or NODATA (authoritative: not a referral), with
 * no CNAME on the way. What `fallthrough` hands to the next plugin, as CoreDNS's file does. */
function noRecords(reply: Msg): boolean {
  if (reply.answer.length > 0) return false;
  return reply.rcode === Rcode.NXDOMAIN || (reply.rcode === Rcode.NOERROR && reply.aa);
}

/**
 * `reply` with the records of its CNAME chain's target appended when the target is outside the zone,
 * resolved through the server: CoreDNS's file always does so (its upstream), and a stub resolver
 * (glibc's, musl's) does not follow a CNAME itself. A target nothing answers leaves the CNAME for the
 * client, as the kubernetes plugin's ExternalName chase does.
 */
export async function chaseOutside(req: Request, zone: Zone, reply: Msg, lookup?: Lookup): Promise<Msg> {
  const last = reply.answer.at(-1);
  if (lookup === undefined || reply.rcode !== Rcode.NOERROR || last?.type !== Type.CNAME) return reply;
  if (req.qtype === Type.CNAME || req.qtype === Type.ANY) return reply;
  const target = (last.data as { target: string }).target;
  // Inside the zone the chain already ends where it must (a loop, a delegation, the length limit).
  if (isSubdomain(target, zone.origin)) return reply;
  try {
    const r = await lookup(target, req.qtype, (req.depth ?? 0) + 1, req.deadline);
    if (r.rcode === Rcode.NOERROR && r.answer.length > 0) {
      reply.answer.push(...r.answer);
      req.cache.limit(LOOKED_UP_SECONDS);
    }
  } catch {
    // the chain alone is still a correct answer
  }
  return reply;
}

/** The reply to `req` from `zone` (which holds its name): file's answers, also secondary's and auto's. */
export function answerFromZone(req: Request, zone: Zone): Msg {
  // Zones hold class IN only: REFUSED for CH and the like. Zone transfers belong to the transfer
  // plugin, which runs before this one.
  if (
    (req.qclass !== Class.IN && req.qclass !== Class.ANY) ||
    req.qtype === Type.AXFR ||
    req.qtype === Type.IXFR
  )
    return failure(req, Rcode.REFUSED);
  const found = zone.lookup(req.qname, req.qtype);
  if (zone.signed) {
    // A signed zone's DNSSEC records go to DO=1 queries only (RFC 4035 3.1); the answer store keys
    // the DO bit, so the two kinds of reply are never replayed to each other.
    if (req.msg.edns?.do === true) zone.addProof(found, req.qname);
    else if (req.qtype === Type.ANY) found.answer = found.answer.filter((rr) => !isProof(rr.type));
  } else if (req.msg.edns?.do === true) zone.addDelegationDs(found);
  const reply = replyTo(req.msg, found.rcode);
  reply.aa = found.authoritative;
  reply.answer = found.answer;
  reply.authority = found.authority;
  reply.additional = found.additional;
  return reply;
}

function isProof(type: number): boolean {
  return type === Type.RRSIG || type === 47;
}

export interface ReloaderOptions {
  path: string;
  origins: readonly string[];
  /** Poll interval in ms; must be > 0. */
  intervalMs: number;
  zones: ZoneSet;
  log: Logger;
  /** Called after a new zone is swapped in (drops cached answers). */
  invalidate: () => void;
}

/** What identifies one version of a file: inode (an atomic rename replaces it), size and mtime. */
export async function fileStamp(path: string): Promise<string> {
  return stamp(await stat(path).catch(() => undefined));
}

/** fileStamp, synchronously, for setup. */
export function fileStampSync(path: string): string {
  try {
    return stamp(statSync(path));
  } catch {
    return stamp(undefined);
  }
}

function stamp(s: Stats | undefined): string {
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}` : "missing";
}

/**
 * Polls the zone file's stamp; on a change, parses it again. A file that no longer parses is logged and
 * the old zones keep serving; one that does replaces them. Only the main file is watched: after editing
 * a file it $INCLUDEs, touch the main file.
 */
export class ZoneReloader {
  readonly #options: ReloaderOptions;
  #stamp: string;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #stopped = false;

  /** `stamp` is the fileStamp taken before the zones in `o.zones` were read. */
  constructor(o: ReloaderOptions, stamp: string) {
    this.#options = o;
    this.#stamp = stamp;
  }

  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => void this.check(), this.#options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One poll; true when new zones were swapped in. Never throws. */
  async check(): Promise<boolean> {
    if (this.#busy || this.#stopped) return false;
    this.#busy = true;
    try {
      const stamp = await fileStamp(this.#options.path);
      if (stamp === this.#stamp) return false;
      // Remember the stamp even when the parse fails, so a broken file is reported once, not every poll.
      this.#stamp = stamp;
      if (stamp === "missing") {
        this.#options.log.warn(
          { file: this.#options.path },
          "zone file is gone; serving the zone loaded before",
        );
        return false;
      }
      let zones: Zone[];
      try {
        zones = loadZones(this.#options.path, this.#options.origins);
      } catch (err) {
        this.#options.log.error(
          { file: this.#options.path, err: (err as Error).message },
          "zone reload failed; serving the zone loaded before",
        );
        return false;
      }
      if (this.#stopped) return false;
      const same = sameSerials(this.#options.zones.zones, zones);
      this.#options.zones.replace(zones);
      this.#options.invalidate();
      const serials = zones.map((z) => `${z.origin}=${z.serial}`);
      this.#options.log.info({ file: this.#options.path, zones: serials }, "zone reloaded");
      // CoreDNS would not have read the file again (it goes by the serial unless reload_by_mtime).
      if (same.length > 0)
        this.#options.log.warn(
          { file: this.#options.path, zones: same },
          "zone file changed but its SOA serial did not: serving the new data, but secondaries " +
            "(transfer) will not fetch it and CoreDNS would not serve it: raise the serial",
        );
      return true;
    } finally {
      this.#busy = false;
    }
  }
}

/** The origins of `after` whose serial is the one they had in `before`. */
function sameSerials(before: readonly Zone[], after: readonly Zone[]): string[] {
  const old = new Map(before.map((z) => [z.origin, z.serial]));
  return after.filter((z) => old.get(z.origin) === z.serial).map((z) => z.origin);
}
