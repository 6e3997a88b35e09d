// template: answers queries from records written as templates. Every template directive of a server
// block joins one list; the first template whose zone, class, type and a regex match the query
// answers it. One whose zone matches but no regex does answers SERVFAIL, unless `fallthrough` lets the
// next template (and then the next plugin) try.

import type { Logger } from "pino";
import type { Handler, Plugin } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import type { CompiledTemplate, TemplateData } from "./go-template.ts";
import type { MetaLabel } from "../metadata/labels.ts";
import { failure } from "../../chain/handler.ts";
import { replyTo, setReplyOption } from "../../dns/message.ts";
import { Class, EdnsOption, Rcode, Type, className, typeName } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { parseRRText } from "../../dns/text.ts";

export interface Template {
  qclass: number;
  qtype: number;
  zones: string[];
  regex: RegExp[];
  answer: CompiledTemplate[];
  additional: CompiledTemplate[];
  authority: CompiledTemplate[];
  rcode: number;
  /** An extended DNS error option for the reply (RFC 8914: INFO-CODE and EXTRA-TEXT), `ederror`. */
  ede?: Uint8Array;
  /** Undefined: no fallthrough; empty: every name; else only names in these zones. */
  fallthrough?: string[];
  /** "Corefile:12", for logs. */
  where: string;
  /** The block's metadata label of a name (`.Meta`); undefined in a block without `metadata`. */
  label?: (name: string) => MetaLabel;
}

export function template(templates: readonly Template[], log: Logger): Plugin {
  return (next: Handler): Handler => ({
    name: "template",
    serve(req) {
      for (const t of templates) {
        const zone = longestZone(t.zones, req.qname);
        if (zone === undefined) continue;
        if (t.qclass !== Class.ANY && req.qclass !== Class.ANY && req.qclass !== t.qclass) continue;
        if (t.qtype !== Type.ANY && req.qtype !== Type.ANY && req.qtype !== t.qtype) continue;
        const m = firstMatch(t.regex, req.qname);
        if (m === null) {
          if (t.fallthrough && fallsThrough(t.fallthrough, req.qname)) continue;
          return Promise.resolve(failure(req, Rcode.SERVFAIL));
        }
        return Promise.resolve(answer(t, req, zone, m, log));
      }
      return next.serve(req);
    },
  });
}

function answer(t: Template, req: Request, zone: string, m: RegExpExecArray, log: Logger): Msg {
  const group: Record<string, string | undefined> = { ...m.groups };
  const read: MetaLabel[] = [];
  m.forEach((g, i) => (group[String(i)] = g));
  const data: TemplateData = {
    name: req.qname,
    zone,
    // A question of class or type ANY renders as the template's (CoreDNS): `{{ .Type }}` makes a record.
    class: className(req.qclass === Class.ANY ? t.qclass : req.qclass),
    type: typeName(req.qtype === Type.ANY ? t.qtype : req.qtype),
    remote: req.remoteAddress,
    match: [...m].map((g) => g ?? ""),
    group,
    meta(name) {
      const label = t.label?.(name);
      if (label === undefined) return "";
      read.push(label);
      return label.value(req) ?? "";
    },
  };
  const reply = replyTo(req.msg, t.rcode);
  reply.aa = true;
  try {
    reply.answer = t.answer.map((c) => record(c, data));
    reply.authority = t.authority.map((c) => record(c, data));
    reply.additional = t.additional.map((c) => record(c, data));
  } catch (err) {
    log.error({ template: t.where, qname: req.qname, error: (err as Error).message }, "template failed");
    return failure(req, Rcode.SERVFAIL);
  }
  req.answeredBy = "template";
  if (t.ede !== undefined) setReplyOption(reply, EdnsOption.EDE, t.ede);
  const perClient = read.some((l) => l.perClient);
  if (perClient || [...t.answer, ...t.authority, ...t.additional].some((c) => c.usesRemote)) {
    req.cache.private = true;
  }
  return reply;
}

/** One rendered record; zone-file parentheses are allowed on the one line. */
function record(c: CompiledTemplate, d: TemplateData): RR {
  return parseRRText(withoutParens(c.render(d)), ".");
}

/** The text with `(` and `)` outside quoted strings turned into spaces. */
function withoutParens(s: string): string {
  let quoted = false;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\" && quoted) {
      out += c + (s[i + 1] ?? "");
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    out += !quoted && (c === "(" || c === ")") ? " " : c;
  }
  return out;
}

function longestZone(zones: readonly string[], name: string): string | undefined {
  let best: string | undefined;
  for (const z of zones) if (isSubdomain(name, z) && (best === undefined || z.length > best.length)) best = z;
  return best;
}

function firstMatch(regex: readonly RegExp[], name: string): RegExpExecArray | null {
  for (const re of regex) {
    const m = re.exec(name);
    if (m) return m;
  }
  return null;
}

function fallsThrough(zones: readonly string[], name: string): boolean {
  return zones.length === 0 || zones.some((z) => isSubdomain(name, z));
}
