// hosts: answers A, AAAA and PTR from a hosts(5) file and from lines inlined in the Corefile, and keeps
// the file's data current by polling its modification time.

import { readFile, stat } from "node:fs/promises";
import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import type { HostsEntry } from "./hosts-file.ts";
import { parseHosts } from "./hosts-file.ts";
import { HostsTable } from "./table.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";

export interface HostsOptions {
  /** Absolute path of the hosts file. */
  path: string;
  /** Zones the plugin answers for (canonical). */
  zones: string[];
  ttl: number;
  /** Generate PTR records (false with no_reverse). */
  reverse: boolean;
  /** undefined: never fall through; []: fall through for every zone; else only below these. */
  fallthrough: string[] | undefined;
  /** Also pass on types hosts cannot hold (TXT, HTTPS...) for names it has. */
  fallthroughUnsupported: boolean;
  /** Entries written in the Corefile block. */
  inline: HostsEntry[];
}

const MISSING = "missing";

/** A hosts file as read: its stamp ("mtime:size:inode", or "missing") and its entries. */
export interface HostsFileData {
  stamp: string;
  entries: HostsEntry[];
}

export class Hosts {
  readonly opts: HostsOptions;
  #table: HostsTable;
  #file: HostsEntry[] = [];
  /** What the file looked like at the last read ("mtime:size:inode"), or MISSING while it cannot be. */
  #stamp: string | undefined;
  readonly #log: Logger;

  constructor(opts: HostsOptions, log: Logger) {
    this.opts = opts;
    this.#log = log;
    this.#table = this.#build();
  }

  get table(): HostsTable {
    return this.#table;
  }

  /** The file as last read: its stamp and entries; undefined before the first read. */
  get fileData(): HostsFileData | undefined {
    return this.#stamp === undefined ? undefined : { stamp: this.#stamp, entries: this.#file };
  }

  /** Starts from the file as another Hosts of the same path read it (a reload's running one): the
   * next refresh() reads the file again only if its stamp changed since. */
  seed(d: HostsFileData): void {
    this.#stamp = d.stamp;
    this.#file = d.entries;
    this.#table = this.#build();
  }

  /** Rereads the file if it changed since the last call. True when the served data changed. */
  async refresh(): Promise<boolean> {
    const { path } = this.opts;
    let stamp: string;
    let text: string;
    try {
      const st = await stat(path);
      if (st.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: "EISDIR" });
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
      if (stamp === this.#stamp) return false;
      text = await readFile(path, "utf8");
    } catch (err) {
      this.#unreadable(err as NodeJS.ErrnoException);
      return false;
    }
    const parsed = parseHosts(text);
    for (const p of parsed.problems) {
      this.#log.warn({ file: path, line: p.line }, `${path}:${p.line}: ${p.message}; line skipped`);
    }
    this.#stamp = stamp;
    this.#file = parsed.entries;
    this.#table = this.#build();
    return true;
  }

  /** The file cannot be read. Once it has been, its last entries stay served, as in CoreDNS: a file
   * moved aside for an edit, or a ConfigMap volume between two updates, does not take its names away.
   * Warned once per failure streak (MISSING marks one). Before the first read only a missing file (or
   * a directory) is a warning: it may appear later; any other failure is thrown for setup to report. */
  #unreadable(err: NodeJS.ErrnoException): void {
    const { path } = this.opts;
    if (this.#stamp === MISSING) return;
    const read = this.#stamp !== undefined;
    if (!read && err.code !== "ENOENT" && err.code !== "ENOTDIR" && err.code !== "EISDIR") throw err;
    const serving = read ? "keeping the entries last read from it" : "serving inline entries only";
    this.#log.warn({ file: path }, `hosts file ${path} is not readable (${err.code}): ${serving}`);
    this.#stamp = MISSING;
  }

  #build(): HostsTable {
    return new HostsTable([this.#file, this.opts.inline], this.opts.zones, this.opts.reverse);
  }

  handler(next: Handler): Handler {
    return {
      name: "hosts",
      serve: (req) => {
        const reply = this.answer(req);
        return reply ? Promise.resolve(reply) : next.serve(req);
      },
    };
  }

  /** The reply, or undefined to pass the query on. */
  answer(req: Request): Msg | undefined {
    const { qname, qtype } = req;
    if (req.qclass !== Class.IN) return undefined;
    const table = this.#table;
    const { ttl, zones } = this.opts;
    const ptr = table.ptr(qname);
    // As in CoreDNS, PTR needs no reverse zone among the plugin's zones, and an unknown address is
    // always passed on.
    if (qtype === Type.PTR) {
      if (!ptr) return undefined;
      return this.#reply(
        req,
        Rcode.NOERROR,
        ptr.map((target) => ({
          name: qname,
          type: Type.PTR,
          class: Class.IN,
          ttl,
          data: { type: Type.PTR, target },
        })),
      );
    }
    if (!zones.some((z) => isSubdomain(qname, z))) return undefined;
    const addrs = table.lookup(qname);
    if (!addrs && !ptr) return this.#falls(qname) ? undefined : this.#reply(req, Rcode.NXDOMAIN, []);
    const answer: RR[] = [];
    if (addrs && qtype === Type.A) {
      for (const address of addrs.v4)
        answer.push({ name: qname, type: Type.A, class: Class.IN, ttl, data: { type: Type.A, address } });
    } else if (addrs && qtype === Type.AAAA) {
      for (const address of addrs.v6) {
        answer.push({
          name: qname,
          type: Type.AAAA,
          class: Class.IN,
          ttl,
          data: { type: Type.AAAA, address },
        });
      }
    } else if (
      qtype !== Type.A &&
      qtype !== Type.AAAA &&
      this.opts.fallthroughUnsupported &&
      this.#falls(qname)
    ) {
      return undefined;
    }
    return this.#reply(req, Rcode.NOERROR, answer);
  }

  #falls(qname: string): boolean {
    const f = this.opts.fallthrough;
    return f !== undefined && (f.length === 0 || f.some((z) => isSubdomain(qname, z)));
  }

  #reply(req: Request, rcode: number, answer: RR[]): Msg {
    const m = replyTo(req.msg, rcode);
    m.aa = true;
    m.answer = answer;
    req.answeredBy = "hosts";
    // No SOA to take a negative TTL from: the record TTL bounds how long a denial is replayed.
    if (answer.length === 0) req.cache.limit(this.opts.ttl);
    return m;
  }
}
