// The search walk of glibc's res_search (resolv/res_query.c, __res_context_search), as a generator:
// it yields each name to query and is told how that query went, so the same code predicts the names
// (candidates(), every query NXDOMAIN) and drives real queries (resolve.ts).
//
// What it encodes, each checked against glibc 2.36 by test/resolver-glibc.test.ts:
// - A trailing dot: the name is queried as it is, once, whatever the answer.
// - dots >= ndots: as is first, then the search list. Otherwise the search list, then as is.
// - Every search domain is used (no limit of 6 or 256 characters since glibc 2.26); a leading "."
//   is dropped; a domain "." (the root) counts as the as-is query, which is then not repeated.
// - The walk goes on after NXDOMAIN, NODATA (remembered) and SERVFAIL (remembered). Any other failure
//   (REFUSED, NOTIMP or FORMERR answers, no answer at all, a name too long to encode) ends the search
//   list; the as-is query still follows if it has not been made.
// - no-tld-query: a name without dots is not queried as is once the search list was tried.
// - No server reachable at all (ECONNREFUSED): the walk ends at once.
// - The error returned: the as-is query's when it was made first, else NO_DATA if any candidate had
//   NODATA, else TRY_AGAIN if any had SERVFAIL, else the last query's.

import type { ResolvConf } from "./resolv-conf.ts";
import { Rcode } from "../dns/constants.ts";

/** glibc's h_errno values for a failed lookup. */
export type HErrno = "HOST_NOT_FOUND" | "TRY_AGAIN" | "NO_RECOVERY" | "NO_DATA";

/** One name the walk wants queried; `unsendable` says why no query can be made for it. */
export interface Candidate {
  name: string;
  /** "as-is" (the name itself) or "search" (the name joined to `domain`). */
  kind: "as-is" | "search";
  domain?: string;
  unsendable?: string;
}

/** How the queries for one candidate ended, as __res_context_query reports it. */
export interface CandidateOutcome {
  found: boolean;
  /** h_errno when not found. */
  herrno?: HErrno;
  /** The rcode left in glibc's first answer buffer (NOERROR when no reply arrived). */
  firstRcode: number;
  /** res_send gave up without any server ever answering. */
  connRefused?: boolean;
}

export interface WalkEnd {
  found: boolean;
  /** The candidate that was found. */
  name?: string;
  herrno?: HErrno;
}

export function countDots(name: string): number {
  let dots = 0;
  for (const c of name) if (c === ".") dots++;
  return dots;
}

/** The name as glibc joins it (name + "." + domain), written absolute. */
function absolute(name: string): string {
  return name.endsWith(".") ? name : name + ".";
}

/**
 * Why res_mkquery cannot encode `name` (relative or absolute text), or undefined when it can: an
 * empty label, a label over 63 octets, or more than 255 octets on the wire. "\." and "\DDD" escapes
 * count as one octet.
 */
export function unencodable(name: string): string | undefined {
  if (name === ".") return undefined;
  const labels: number[] = [];
  let len = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === "\\") {
      i += /^\d{3}$/.test(name.slice(i + 1, i + 4)) ? 3 : 1;
      len++;
    } else if (c === ".") {
      labels.push(len);
      len = 0;
    } else len++;
  }
  if (len > 0 || labels.length === 0) labels.push(len);
  if (labels.some((l) => l === 0)) return "it has an empty label";
  const long = labels.find((l) => l > 63);
  if (long !== undefined) return `it has a label of ${long} octets (at most 63)`;
  const wire = labels.reduce((a, l) => a + l + 1, 1);
  if (wire > 255) return `it is ${wire} octets long (at most 255)`;
  return undefined;
}

const HOST_OCTET = /^[0-9A-Za-z_-]$/;

/**
 * glibc's res_hnok, which getaddrinfo and gethostbyname2 (nss_dns's check_name, glibc 2.34+) apply to
 * the name before any query: printable ASCII that encodes, every octet of every label (escapes
 * decoded) a letter, digit, "-" or "_", and no "-" first. Any other name is HOST_NOT_FOUND unsent.
 */
export function isHostName(name: string): boolean {
  if (!/^[!-~]*$/.test(name) || unencodable(name) !== undefined) return false;
  for (let i = 0; i < name.length; i++) {
    const first = i === 0;
    let c = name[i];
    if (c === ".") continue;
    if (c === "\\") {
      const ddd = /^\d{3}/.exec(name.slice(i + 1))?.[0];
      c = ddd !== undefined ? String.fromCharCode(Number(ddd)) : (name[i + 1] ?? "");
      i += ddd !== undefined ? 3 : 1;
    }
    if (!HOST_OCTET.test(c) || (first && c === "-")) return false;
  }
  return true;
}

function candidate(name: string, domain: string | undefined): Candidate {
  const text = domain === undefined ? name : `${name}.${domain}`;
  const c: Candidate =
    domain === undefined
      ? { name: absolute(text), kind: "as-is" }
      : { name: absolute(text), kind: "search", domain };
  const why = unencodable(text);
  if (why !== undefined) c.unsendable = why;
  return c;
}

/** What a candidate that could not be encoded counts as: res_mkquery failed, NO_RECOVERY. */
const NOT_SENT: CandidateOutcome = { found: false, herrno: "NO_RECOVERY", firstRcode: Rcode.NOERROR };

/**
 * The walk for `name`. Yields each candidate; the driver answers with `next(outcome)` (for an
 * unsendable candidate the outcome is ignored) and the generator returns how the lookup ended.
 */
export function* searchWalk(name: string, conf: ResolvConf): Generator<Candidate, WalkEnd, CandidateOutcome> {
  const dots = countDots(name);
  const trailingDot = name.endsWith(".");
  let herrno: HErrno = "HOST_NOT_FOUND";
  let savedHerrno: HErrno | undefined;
  let gotNodata = false;
  let gotServfail = false;
  let rootOnList = false;
  let triedAsIs = false;
  let searched = false;

  const query = function* (c: Candidate): Generator<Candidate, CandidateOutcome, CandidateOutcome> {
    const got = yield c;
    return c.unsendable !== undefined ? NOT_SENT : got;
  };

  if (dots >= conf.ndots || trailingDot) {
    const c = candidate(name, undefined);
    const o = yield* query(c);
    if (o.found) return { found: true, name: c.name };
    herrno = o.herrno ?? "HOST_NOT_FOUND";
    if (trailingDot) return { found: false, herrno };
    savedHerrno = herrno;
    triedAsIs = true;
  }

  // glibc's RES_DEFNAMES and RES_DNSRCH are always on for resolv.conf users.
  if (!trailingDot) {
    for (const listed of conf.search) {
      searched = true;
      const domain = listed.startsWith(".") ? listed.slice(1) : listed;
      if (domain === "") rootOnList = true;
      const c = domain === "" ? candidate(name, undefined) : candidate(name, domain);
      if (domain === "") c.kind = "search";
      const o = yield* query(c);
      if (o.found) return { found: true, name: c.name };
      herrno = o.herrno ?? "HOST_NOT_FOUND";
      if (o.connRefused) return { found: false, herrno: "TRY_AGAIN" };
      if (herrno === "NO_DATA") gotNodata = true;
      else if (herrno === "TRY_AGAIN" && o.firstRcode === Rcode.SERVFAIL) gotServfail = true;
      else if (herrno !== "HOST_NOT_FOUND") break;
    }
  }

  if ((dots > 0 || !searched || !conf.noTldQuery) && !(triedAsIs || rootOnList)) {
    const c = candidate(name, undefined);
    const o = yield* query(c);
    if (o.found) return { found: true, name: c.name };
    herrno = o.herrno ?? "HOST_NOT_FOUND";
  }

  if (savedHerrno !== undefined) herrno = savedHerrno;
  else if (gotNodata) herrno = "NO_DATA";
  else if (gotServfail) herrno = "TRY_AGAIN";
  return { found: false, herrno };
}

/**
 * The absolute names glibc queries for `name`, in order, when every query is answered NXDOMAIN.
 * Names it cannot encode are left out (they are never sent; one ends the search list).
 */
export function candidates(name: string, conf: ResolvConf): string[] {
  const out: string[] = [];
  const walk = searchWalk(name, conf);
  const nx: CandidateOutcome = { found: false, herrno: "HOST_NOT_FOUND", firstRcode: Rcode.NXDOMAIN };
  for (let step = walk.next(); !step.done; step = walk.next(nx)) {
    if (step.value.unsendable === undefined) out.push(step.value.name);
  }
  return out;
}

/** The header fields of a reply that decide a lookup. */
export interface ReplyHead {
  rcode: number;
  ancount: number;
}

/**
 * __res_context_query's verdict on what res_send left: `first` and `second` are the replies in its two
 * answer buffers that count (undefined when that buffer holds none), `failed` is set when res_send gave
 * up. With one query only `first` is used.
 */
export function queryOutcome(r: {
  first?: ReplyHead;
  second?: ReplyHead;
  failed?: "ECONNREFUSED" | "ETIMEDOUT";
  /** The rcode in the first buffer even when it does not count (a SERVFAIL kept there). */
  firstRcode: number;
}): CandidateOutcome {
  const base = { firstRcode: r.firstRcode };
  if (r.failed !== undefined || (r.first === undefined && r.second === undefined)) {
    return { ...base, found: false, herrno: "TRY_AGAIN", connRefused: r.failed === "ECONNREFUSED" };
  }
  // glibc uses one buffer for both tests when the other holds no reply.
  const hp = r.first ?? r.second!;
  const hp2 = r.second ?? hp;
  const good = (h: ReplyHead) => h.rcode === Rcode.NOERROR && h.ancount > 0;
  if (good(hp) || good(hp2)) return { ...base, found: true };
  const rcode = hp.rcode === Rcode.NOERROR ? hp2.rcode : hp.rcode;
  const herrno: HErrno =
    rcode === Rcode.NXDOMAIN
      ? "HOST_NOT_FOUND"
      : rcode === Rcode.SERVFAIL
        ? "TRY_AGAIN"
        : rcode === Rcode.NOERROR
          ? "NO_DATA"
          : "NO_RECOVERY";
  return { ...base, found: false, herrno };
}
