// template CLASS TYPE [ZONE...] {
//     match REGEX...
//     answer RR
//     additional RR
//     authority RR
//     rcode CODE
//     fallthrough [ZONE...]
//     ederror EXTENDED_ERROR_CODE [EXTRA_REASON]
//     upstream [ADDRESS...]      (accepted and ignored, as CoreDNS does)
// }
// Every template directive of a server block joins one list, in Corefile order, so that fallthrough
// passes to the next template.

import { joinInBlock, type Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { Template } from "./template.ts";
import type { CompiledTemplate } from "./go-template.ts";
import { template } from "./template.ts";
import { compileTemplate } from "./go-template.ts";
import { goRegExp, groupCount } from "../rewrite/go-regexp.ts";
import {
  argCount,
  blockOptions,
  ignoredOption,
  noBlock,
  parseIntArg,
  zonesArg,
} from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { canonical } from "../../dns/name.ts";
import { metadataOf } from "../metadata/labels.ts";
import { Type, classFromName, rcodeFromName, typeFromName } from "../../dns/constants.ts";

/** The template list of each server block that has template directives. */
const lists = new WeakMap<object, Template[]>();

export const setup: Setup = (d, ctx) => {
  argCount(d, "template", 2, Infinity);
  const [cls, type] = d.args;
  const qclass = classFromName(cls.text);
  if (qclass === undefined) throw configError(cls, "template", `unknown class '${cls.text}'`);
  const qtype = typeFromName(type.text);
  if (qtype === undefined || qtype === Type.OPT) {
    throw configError(type, "template", `unknown type '${type.text}'`);
  }
  const t: Template = {
    qclass,
    qtype,
    zones: zonesArg(d.args.slice(2), ctx.zones, "template"),
    regex: [],
    answer: [],
    additional: [],
    authority: [],
    rcode: 0,
    where: `${d.file}:${d.line}`,
  };
  const metadata = metadataOf(ctx.block.shared);
  if (metadata !== undefined) t.label = (name) => metadata.label(name);
  const compiled: [Token, CompiledTemplate][] = [];
  const rr = (list: CompiledTemplate[]) => (opt: Directive) => {
    argCount(opt, "template", 1, Infinity);
    for (const a of opt.args) {
      try {
        const c = compileTemplate(a.text);
        list.push(c);
        compiled.push([a, c]);
      } catch (err) {
        throw configError(a, "template", (err as Error).message);
      }
    }
  };
  blockOptions(d, "template", {
    match(opt) {
      argCount(opt, "template", 1, Infinity);
      for (const a of opt.args) {
        try {
          t.regex.push(goRegExp(a.text));
        } catch (err) {
          throw configError(a, "template", `invalid regex '${a.text}': ${(err as Error).message}`);
        }
      }
    },
    answer: rr(t.answer),
    additional: rr(t.additional),
    authority: rr(t.authority),
    rcode(opt) {
      argCount(opt, "template", 1, 1);
      const r = rcodeFromName(opt.args[0].text);
      if (r === undefined) throw configError(opt.args[0], "template", `unknown rcode '${opt.args[0].text}'`);
      t.rcode = r;
    },
    fallthrough(opt) {
      t.fallthrough = opt.args.map((a) => canonical(a.text));
    },
    upstream(opt) {
      noBlock(opt, "template");
      ignoredOption(opt, ctx.log("template"), "a no-op in CoreDNS too");
    },
    ederror(opt) {
      argCount(opt, "template", 1, 2);
      const code = parseIntArg(opt.args[0], "template", 0, 0xffff);
      const extra = Buffer.from(opt.args[1]?.text ?? "", "utf8");
      t.ede = Uint8Array.of(code >> 8, code & 0xff, ...extra);
    },
  });
  if (t.regex.length === 0) t.regex.push(/.*/);
  checkGroups(t.regex, compiled);

  return joinInBlock(lists, ctx.block, t, (templates) => template(templates, ctx.log("template")));
};

/** Every group a template reads must come from some `match` regex: a typo fails here, not per query. */
function checkGroups(regex: RegExp[], compiled: [Token, CompiledTemplate][]): void {
  const known = new Set<string>();
  for (const re of regex) {
    for (let i = 0; i <= groupCount(re); i++) known.add(String(i));
    for (const name of re.source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)) known.add(name[1]);
  }
  for (const [tok, c] of compiled) {
    for (const g of c.groups) {
      if (!known.has(g)) throw configError(tok, "template", `no match regex has a group '${g}'`);
    }
  }
}
