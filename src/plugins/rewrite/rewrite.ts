// rewrite: changes the question before the rest of the chain sees it (name, type, class, EDNS options),
// and the reply on its way back: the client's own question, names mapped back (`answer ...`), TTLs
// (`ttl`), CNAME targets (`cname`, then looked up anew) and rcodes (`rcode`). Every rewrite directive
// of a server block adds its rules to one list, applied in order; a rule that matched ends the list
// unless its mode is `continue`. Rules that do not look at the name (edns0, cname) always match, as
// in CoreDNS.

import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RData, RR } from "../../dns/message.ts";
import type { Rule } from "./rules.ts";
import type { NameMatch } from "./name-match.ts";
import type { EdnsRule } from "./edns0.ts";
import { failure } from "../../chain/handler.ts";
import { EDNS_UDP_SIZE, Rcode, Type } from "../../dns/constants.ts";
import { matches, reverseName, rewriteName, validName } from "./name-match.ts";
import { applyEdnsRule } from "./edns0.ts";

/** Resolves a name through the server (SetupContext.lookup), for a rewritten CNAME target. */
export type Lookup = (name: string, qtype: number, depth: number) => Promise<Msg>;

/** How long a reply whose rcode was rewritten from a failure may be replayed: a failure carries no TTL
 * to go by, and CoreDNS's cache keeps such a reply for its smallest TTL, 5 seconds. */
export const REWRITTEN_FAILURE_SECONDS = 5;

import { LOOKED_UP_SECONDS } from "../../answers/policy.ts";

/** What the rules decided for one query. */
interface Plan {
  qname: string;
  qtype: number;
  qclass: number;
  /** Maps for owner names and for names inside records, applied in order. */
  owners: ((name: string) => string)[];
  values: ((name: string) => string)[];
  ttl?: { min: number; max: number };
  edns: EdnsRule[];
  cnames: NameMatch[];
  rcodes: { from: number; to: number }[];
}

export function rewrite(rules: readonly Rule[], lookup: Lookup): Plugin {
  return (next: Handler): Handler => ({
    name: "rewrite",
    async serve(req) {
      const plan = planFor(rules, req);
      if (plan === undefined) return next.serve(req);
      if (!validName(plan.qname)) return failure(req, Rcode.SERVFAIL);
      // Shares the client's AnswerPolicy (what the inner plugins decide about caching reaches the
      // pipeline, filed under the client's question); the stored entry and its refresh belong to the
      // client's question, not this one.
      const inner: Request = {
        ...req,
        msg: { ...req.msg, question: [{ name: plan.qname, type: plan.qtype, class: plan.qclass }] },
        qname: plan.qname,
        qtype: plan.qtype,
        qclass: plan.qclass,
      };
      if (plan.edns.length > 0) withOptions(inner, plan.edns);
      // `cache` (which runs before rewrite) has read them; the plugins inside must not see them.
      const { stored, refresh } = req.cache;
      req.cache.stored = undefined;
      req.cache.refresh = undefined;
      let reply: Msg;
      try {
        reply = await next.serve(inner);
      } finally {
        req.cache.stored = stored;
        req.cache.refresh = refresh;
      }
      req.answeredBy = inner.answeredBy;
      revert(reply, req, plan);
      for (const r of plan.rcodes) {
        if (reply.rcode !== r.from) continue;
        // The pipeline keeps only NOERROR and NXDOMAIN, for the TTLs they carry; a failure has none.
        if (r.from !== Rcode.NOERROR && r.from !== Rcode.NXDOMAIN) req.cache.limit(REWRITTEN_FAILURE_SECONDS);
        reply.rcode = r.to;
        break;
      }
      if (plan.cnames.length > 0) await retarget(reply, req, plan.cnames, lookup);
      return reply;
    },
  });
}

/** The query's EDNS options after the edns0 rules, for the plugins after rewrite, and the options the
 * rules put in, for forward to send upstream. */
function withOptions(inner: Request, rules: EdnsRule[]): void {
  const options = [...(inner.msg.edns?.options ?? [])];
  for (const r of rules) applyEdnsRule(r, options, inner);
  const ours = new Set(rules.filter((r) => r.action !== "unset").map((r) => r.code));
  inner.msg.edns = { ...(inner.msg.edns ?? { udpSize: EDNS_UDP_SIZE, version: 0, do: false }), options };
  inner.upstreamOptions = options.filter((o) => ours.has(o.code));
  // An option made from who asked makes the upstream's reply theirs.
  if (rules.some((r) => r.perClient && r.action !== "unset")) inner.cache.private = true;
}

/** Rewrites the target of the first CNAME in the answer that a rule matches, drops the records that
 * followed it (they answer for the old target) and appends what the new target holds. */
async function retarget(reply: Msg, req: Request, cnames: NameMatch[], lookup: Lookup): Promise<void> {
  for (const [i, rr] of reply.answer.entries()) {
    if (rr.type !== Type.CNAME) continue;
    const old = (rr.data as { target: string }).target;
    let target = old;
    for (const m of cnames) target = rewriteName(m, target) ?? target;
    if (target === old || !validName(target)) continue;
    reply.answer = [...reply.answer.slice(0, i), { ...rr, data: { type: Type.CNAME, target } }];
    req.cache.limit(LOOKED_UP_SECONDS);
    if (req.qtype !== Type.CNAME) {
      const found = await lookup(target, req.qtype, (req.depth ?? 0) + 1);
      reply.answer.push(...found.answer);
    }
    return;
  }
}

/** Runs the rules over the question; undefined when none matched. */
function planFor(rules: readonly Rule[], req: Request): Plan | undefined {
  const plan: Plan = {
    qname: req.qname,
    qtype: req.qtype,
    qclass: req.qclass,
    owners: [],
    values: [],
    edns: [],
    cnames: [],
    rcodes: [],
  };
  let matched = false;
  for (const rule of rules) {
    let hit = false;
    switch (rule.field) {
      case "name": {
        const to = rewriteName(rule.match, plan.qname);
        if (to === undefined) break;
        hit = true;
        const a = rule.answer;
        if (a.auto) {
          const back = reverseName(rule.match, plan.qname, to);
          plan.owners.unshift(back);
          plan.values.unshift(back);
        }
        // Maps run in reverse order of the rewrites, so a later rewrite is undone first.
        plan.owners.unshift(...a.names);
        plan.values.unshift(...a.names, ...a.values);
        plan.qname = to;
        break;
      }
      case "type":
        if (plan.qtype !== rule.from) break;
        hit = true;
        plan.qtype = rule.to;
        break;
      case "class":
        if (plan.qclass !== rule.from) break;
        hit = true;
        plan.qclass = rule.to;
        break;
      case "ttl":
        if (!matches(rule.match, plan.qname)) break;
        hit = true;
        plan.ttl = rule;
        break;
      case "edns0":
        hit = true;
        plan.edns.push(rule.option);
        break;
      case "cname":
        hit = true;
        plan.cnames.push(rule.match);
        break;
      case "rcode":
        if (!matches(rule.match, plan.qname)) break;
        hit = true;
        plan.rcodes.push(rule);
        break;
    }
    matched ||= hit;
    if (hit && rule.mode === "stop") break;
  }
  return matched ? plan : undefined;
}

/** The reply as the client expects it. Records are copied before any change: plugins may hand out
 * records they keep (a zone's data). */
function revert(reply: Msg, req: Request, plan: Plan): Msg {
  reply.question = req.msg.question.map((q) => ({ ...q }));
  if (plan.owners.length === 0 && plan.values.length === 0 && plan.ttl === undefined) return reply;
  const fix = (rr: RR): RR => {
    const name = mapAll(plan.owners, rr.name);
    const data = plan.values.length > 0 ? mapData(rr.data, (n) => mapAll(plan.values, n)) : rr.data;
    const ttl = plan.ttl ? Math.min(Math.max(rr.ttl, plan.ttl.min), plan.ttl.max) : rr.ttl;
    return name === rr.name && data === rr.data && ttl === rr.ttl ? rr : { ...rr, name, ttl, data };
  };
  reply.answer = reply.answer.map(fix);
  reply.authority = reply.authority.map(fix);
  reply.additional = reply.additional.map(fix);
  return reply;
}

function mapAll(maps: readonly ((name: string) => string)[], name: string): string {
  let n = name;
  for (const f of maps) n = f(n);
  return n;
}

/** The record data with its names mapped; the same object when nothing changed. */
function mapData(d: RData, f: (name: string) => string): RData {
  if ("raw" in d) return d;
  switch (d.type) {
    case Type.CNAME:
    case Type.NS:
    case Type.PTR: {
      const target = f(d.target);
      return target === d.target ? d : { ...d, target };
    }
    case Type.MX: {
      const exchange = f(d.exchange);
      return exchange === d.exchange ? d : { ...d, exchange };
    }
    case Type.SRV: {
      const target = f(d.target);
      return target === d.target ? d : { ...d, target };
    }
    case Type.SOA: {
      const mname = f(d.mname);
      const rname = f(d.rname);
      return mname === d.mname && rname === d.rname ? d : { ...d, mname, rname };
    }
  }
  return d;
}
