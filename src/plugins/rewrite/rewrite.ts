// rewrite: changes the question before the rest of the chain sees it (name, type, class), and the
// reply on its way back: the client's own question, names mapped back (`answer ...`), TTLs (`ttl`).
// Every rewrite directive of a server block adds its rules to one list, applied in order; a rule that
// matched ends the list unless its mode is `continue`.

import type { Handler, Plugin, Request } from "../../plugin.ts";
import type { Msg, RData, RR } from "../../dns/message.ts";
import type { Rule } from "./rules.ts";
import { failure } from "../../plugin.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { matches, reverseName, rewriteName, validName } from "./name-match.ts";

/** What the rules decided for one query. */
interface Plan {
  qname: string;
  qtype: number;
  qclass: number;
  /** Maps for owner names and for names inside records, applied in order. */
  owners: ((name: string) => string)[];
  values: ((name: string) => string)[];
  ttl?: { min: number; max: number };
}

export function rewrite(rules: readonly Rule[]): Plugin {
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
        stored: undefined,
        refresh: undefined,
      };
      const reply = await next.serve(inner);
      req.answeredBy = inner.answeredBy;
      return revert(reply, req, plan);
    },
  });
}

/** Runs the rules over the question; undefined when none matched. */
function planFor(rules: readonly Rule[], req: Request): Plan | undefined {
  const plan: Plan = { qname: req.qname, qtype: req.qtype, qclass: req.qclass, owners: [], values: [] };
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
    case Type.NS: {
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
