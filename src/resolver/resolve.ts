// What a glibc program sends and gets for a name: the search walk (search.ts) driven by real queries
// (send.ts), and the result glibc's callers make of the answers. Three callers are modelled:
// - "ahosts": getaddrinfo with AF_UNSPEC, as `getent ahosts` and most programs: A and AAAA for each
//   candidate (A only with options no-aaaa). Assumes the host has IPv6 and IPv4 addresses other than
//   loopback, or neither: with AI_ADDRCONFIG and only non-loopback IPv4, glibc asks A alone (use type A).
// - "hosts": `getent hosts`, i.e. gethostbyname2(AF_INET6), then gethostbyname2(AF_INET) if that
//   fails: a whole walk of AAAA queries, then a whole walk of A queries.
// - a single type (res_search), as `host -t TYPE` or a program calling res_search does.
// /etc/hosts, which glibc reads before DNS with "hosts: files dns", is not consulted.

import { isIPv6 } from "node:net";
import { Type, rcodeName, typeName } from "../dns/constants.ts";
import type { Msg, RR } from "../dns/message.ts";
import { rdataToText } from "../dns/text.ts";
import { inetAton, type ResolvConf } from "./resolv-conf.ts";
import {
  isHostName,
  unencodable,
  searchWalk,
  queryOutcome,
  type CandidateOutcome,
  type HErrno,
} from "./search.ts";
import {
  buildQuery,
  resSend,
  type QueryEvent,
  type SendResult,
  type SendSession,
  type Server,
} from "./send.ts";

export type Mode = "ahosts" | "hosts";

export interface ResolveOptions {
  conf: ResolvConf;
  /** Servers to ask instead of the resolv.conf's nameservers (port 53). */
  servers?: Server[];
  /** Default "ahosts". Ignored when `type` is set. */
  mode?: Mode;
  /** One query type per candidate (res_search) instead of an address lookup. */
  type?: number;
}

/** One query sent, in order. */
export interface TraceQuery {
  name: string;
  type: string;
  server: string;
  transport: "udp" | "tcp";
  /** Undefined when no reply came (see note). */
  rcode?: string;
  flags?: string[];
  answers: string[];
  note?: string;
}

/** A candidate name glibc could not put in a query (it is then not sent). */
export interface NotSent {
  name: string;
  reason: string;
  /** How many queries had been sent before it. */
  after: number;
}

export interface ResolveResult {
  resolved: boolean;
  /** The name glibc reports (getaddrinfo's canonname, gethostbyname's h_name), without the final dot. */
  canonicalName?: string;
  /** gethostbyname's h_aliases: the names that led there through CNAMEs. */
  aliases: string[];
  /** Addresses in the order of the answers (getaddrinfo then sorts them by RFC 6724). */
  addresses: string[];
  /** For a single-type lookup: the records of that type, as zone-file text. */
  records: string[];
  /** The candidate that answered. */
  answeredBy?: string;
  /** getaddrinfo's error (EAI_NONAME, EAI_AGAIN, EAI_NODATA) or, for the other modes, h_errno's. */
  error?: string;
  herrno?: HErrno;
}

export interface Trace {
  name: string;
  mode: Mode | "query";
  /** The query types per candidate, e.g. ["A", "AAAA"]. */
  types: string[];
  queries: TraceQuery[];
  notSent: NotSent[];
  result: ResolveResult;
}

interface WalkRun {
  found: boolean;
  name?: string;
  herrno?: HErrno;
  replies: Msg[];
}

/** What every walk of one resolve() shares: where queries go, glibc's session flags, and the trace. */
interface Walker {
  name: string;
  conf: ResolvConf;
  servers: Server[];
  session: SendSession;
  queries: TraceQuery[];
  notSent: NotSent[];
}

export async function resolve(name: string, o: ResolveOptions): Promise<Trace> {
  const conf = o.conf;
  const w: Walker = {
    name,
    conf,
    servers: o.servers ?? conf.nameservers.map((address) => ({ address, port: 53 })),
    session: { singleRequest: conf.singleRequest, singleRequestReopen: conf.singleRequestReopen },
    queries: [],
    notSent: [],
  };
  const mode: Trace["mode"] = o.type !== undefined ? "query" : (o.mode ?? "ahosts");
  const types =
    mode === "query"
      ? [o.type!]
      : mode === "hosts"
        ? [Type.AAAA, Type.A]
        : conf.noAaaa
          ? [Type.A]
          : [Type.A, Type.AAAA];
  const trace = (result: ResolveResult): Trace => ({
    name,
    mode,
    types: types.map(typeName),
    queries: w.queries,
    notSent: w.notSent,
    result,
  });

  if (mode !== "query") {
    const unsent = withoutDns(name, mode);
    if (unsent?.reason) w.notSent.push({ name, reason: unsent.reason, after: 0 });
    if (unsent) return trace(unsent.result);
  }
  if (mode === "ahosts") return trace(await getaddrinfo(w, types));
  if (mode === "hosts") return trace(await gethostbyname(w, types));
  const run = await walk(w, types);
  if (!run.found) return trace({ ...empty(), error: run.herrno, herrno: run.herrno });
  const got = collect(run.name!, run.replies, types);
  return trace({ ...got, resolved: got.records.length > 0, answeredBy: run.name });
}

/**
 * What glibc answers without DNS, if anything. An address literal: getaddrinfo reads inet_aton's forms,
 * gethostbyname2 only digits and dots (nss/digits_dots.c), and when those are no address it is
 * HOST_NOT_FOUND. A name that is no host name (res_hnok) is HOST_NOT_FOUND too.
 */
function withoutDns(name: string, mode: Mode): { result: ResolveResult; reason?: string } | undefined {
  const numeric = /^\d[\d.]*$/.test(name) && !name.endsWith(".");
  const v4 = mode === "ahosts" || numeric ? inetAton(name) : undefined;
  const address = v4 ?? (isIPv6(name) ? name : undefined);
  if (address !== undefined) {
    return {
      result: { resolved: true, canonicalName: name, aliases: [], addresses: [address], records: [] },
    };
  }
  let reason: string | undefined;
  if (mode === "hosts" && numeric) reason = "digits and dots that are no IPv4 address (gethostbyname2)";
  else if (unencodable(name) !== undefined) reason = `cannot be encoded: ${unencodable(name)}`;
  else if (!isHostName(name))
    reason = "not a host name: letters, digits, '-' and '_' only, no '-' first (res_hnok)";
  if (reason === undefined) return undefined;
  const error = mode === "ahosts" ? "EAI_NONAME" : "HOST_NOT_FOUND";
  return { result: { ...empty(), error, herrno: "HOST_NOT_FOUND" }, reason };
}

/** getaddrinfo: one walk asking every type of `types` per candidate. */
async function getaddrinfo(w: Walker, types: number[]): Promise<ResolveResult> {
  const run = await walk(w, types);
  if (!run.found) return { ...empty(), error: eai(run.herrno), herrno: run.herrno };
  const got = collect(run.name!, run.replies, types);
  if (got.addresses.length === 0) return { ...got, answeredBy: run.name, error: "EAI_NONAME" };
  return { ...got, resolved: true, answeredBy: run.name };
}

/** gethostbyname2 for each type of `types` in turn, until one finds addresses. */
async function gethostbyname(w: Walker, types: number[]): Promise<ResolveResult> {
  let last: ResolveResult = empty();
  for (const t of types) {
    const run = await walk(w, [t]);
    if (!run.found) {
      last = { ...empty(), error: run.herrno, herrno: run.herrno };
      continue;
    }
    const got = collect(run.name!, run.replies, [t]);
    if (got.addresses.length > 0) return { ...got, resolved: true, answeredBy: run.name };
    last = { ...got, answeredBy: run.name, error: "NO_RECOVERY", herrno: "NO_RECOVERY" };
  }
  return last;
}

/** One whole search walk with `types` per candidate. */
async function walk(w: Walker, types: number[]): Promise<WalkRun> {
  const candidates = searchWalk(w.name, w.conf);
  let replies: Msg[] = [];
  let outcome: CandidateOutcome | undefined;
  for (;;) {
    const step = outcome === undefined ? candidates.next() : candidates.next(outcome);
    if (step.done) return { ...step.value, replies };
    const c = step.value;
    if (c.unsendable !== undefined) {
      w.notSent.push({ name: c.name, reason: `cannot be encoded: ${c.unsendable}`, after: w.queries.length });
      outcome = { found: false, herrno: "NO_RECOVERY", firstRcode: 0 };
      continue;
    }
    const r = await send(w, c.name, types);
    replies = [r.first, r.second].filter((m): m is Msg => m !== undefined);
    outcome = queryOutcome({
      first: r.first && head(r.first),
      second: r.second && head(r.second),
      failed: r.failed,
      firstRcode: r.firstRcode,
    });
  }
}

/** The queries of one candidate, as res_send sends them. */
async function send(w: Walker, name: string, types: number[]): Promise<SendResult> {
  const { conf, servers, session } = w;
  // no-aaaa: a lone AAAA query goes out as A, and its answer is read as NODATA (res-noaaaa.c).
  const suppressed = conf.noAaaa && types.length === 1 && types[0] === Type.AAAA;
  const msgs = types.map((t) => buildQuery(name, suppressed ? Type.A : t, conf));
  if (suppressed) msgs[0].edns = undefined;
  const onEvent = (e: QueryEvent) => w.queries.push(traceQuery(e));
  const r = await resSend(msgs, { conf, servers, session, onEvent });
  if (suppressed) {
    if (r.first) r.first = { ...r.first, answer: [] };
    if (r.second) r.second = { ...r.second, answer: [] };
  }
  return r;
}

function empty(): ResolveResult {
  return { resolved: false, aliases: [], addresses: [], records: [] };
}

function head(m: Msg) {
  return { rcode: m.rcode, ancount: m.answer.length };
}

/** getaddrinfo's error for a failed walk. */
function eai(h: HErrno | undefined): string {
  return h === "TRY_AGAIN" ? "EAI_AGAIN" : h === "NO_DATA" ? "EAI_NODATA" : "EAI_NONAME";
}

const bare = (n: string) => (n.length > 1 && n.endsWith(".") ? n.slice(0, -1) : n);
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * What glibc takes from the answer sections: follow CNAMEs from the asked name, then the records of
 * the asked type owned by the name reached. Records owned by other names are skipped, as glibc does.
 */
function collect(asked: string, replies: Msg[], types: number[]): ResolveResult {
  const out: ResolveResult = empty();
  for (const m of replies) {
    const qtype = m.question[0]?.type;
    let owner = asked;
    const aliases: string[] = [];
    for (let hops = 0; hops < 16; hops++) {
      const cname = m.answer.find((rr) => rr.type === Type.CNAME && same(rr.name, owner));
      if (cname === undefined || qtype === Type.CNAME) break;
      aliases.push(bare(cname.name));
      owner = (cname.data as { target: string }).target;
    }
    const wanted = m.answer.filter(
      (rr) => rr.type === qtype && types.includes(rr.type) && same(rr.name, owner),
    );
    if (wanted.length === 0) continue;
    out.canonicalName ??= bare(wanted[0].name);
    if (out.aliases.length === 0) out.aliases = aliases;
    for (const rr of wanted) {
      if (rr.type === Type.A || rr.type === Type.AAAA)
        out.addresses.push((rr.data as { address: string }).address);
      out.records.push(recordText(rr));
    }
  }
  return out;
}

function recordText(rr: RR): string {
  return `${rr.name} ${rr.ttl} ${typeName(rr.type)} ${rdataToText(rr.data)}`;
}

function traceQuery(e: QueryEvent): TraceQuery {
  const q: TraceQuery = {
    name: e.name,
    type: typeName(e.type),
    server: e.server,
    transport: e.transport,
    answers: [],
  };
  if (e.reply) {
    const r = e.reply;
    q.rcode = rcodeName(r.rcode);
    q.flags = (["aa", "tc", "rd", "ra", "ad"] as const).filter((f) => r[f]);
    q.answers = r.answer.map(recordText);
  }
  if (e.note !== undefined) q.note = e.note;
  return q;
}
