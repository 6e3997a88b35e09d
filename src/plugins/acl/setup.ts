// acl [ZONES...] {
//     ACTION [type QTYPE...] [net SOURCE...]
// }
// ACTION is allow, block, filter or drop; QTYPE a type name or `*`, SOURCE an address, a CIDR prefix
// or `*`. Every acl directive of a server block joins one list, in Corefile order (policy.ts).

import { joinInBlock, type Setup } from "../../setup/registry.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import type { Action, Policy, Rule } from "./policy.ts";
import { acl } from "./acl.ts";
import { noBlock, zonesArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { typeFromName } from "../../dns/constants.ts";
import { NetSet } from "../../dns/nets.ts";
import "./metrics.ts";

const ACTIONS: readonly string[] = ["allow", "block", "filter", "drop"] satisfies Action[];

/** The rules of each server block that has acl directives. */
const lists = new WeakMap<object, Rule[]>();

export const setup: Setup = (d, ctx) => {
  if (!d.block || d.block.length === 0) {
    throw configError(
      d,
      "acl",
      "needs a block with at least one line: ACTION [type QTYPE...] [net SOURCE...]",
    );
  }
  const rule: Rule = { zones: zonesArg(d.args, ctx.zones, "acl"), policies: d.block.map(parsePolicy) };
  return joinInBlock(lists, ctx.block, rule, acl);
};

function parsePolicy(line: Directive): Policy {
  noBlock(line, "acl");
  if (!ACTIONS.includes(line.name)) {
    throw configError(line, "acl", `unknown action '${line.name}' (want ${ACTIONS.join(", ")})`);
  }
  // The words after `type` and after `net`; undefined where the line does not say (every one).
  const words: { type?: Token[]; net?: Token[] } = {};
  let section: Token[] | undefined;
  for (const t of line.args) {
    if (t.text === "type" || t.text === "net") {
      section = words[t.text] ??= [];
    } else if (section === undefined) {
      throw configError(t, "acl", `unexpected '${t.text}' (want 'type' or 'net')`);
    } else {
      section.push(t);
    }
  }
  for (const [key, list] of Object.entries(words)) {
    if (list.length === 0) throw configError(line, "acl", `'${key}' needs at least one value (or *)`);
  }
  return { action: line.name as Action, types: typesOf(words.type), nets: netsOf(words.net) };
}

function typesOf(words: Token[] | undefined): Set<number> | undefined {
  if (words === undefined || words.some((t) => t.text === "*")) return undefined;
  return new Set(words.map((t) => typeFromName(t.text) ?? fail(t, `unknown type '${t.text}'`)));
}

function netsOf(words: Token[] | undefined): NetSet | undefined {
  if (words === undefined || words.some((t) => t.text === "*")) return undefined;
  const nets = new NetSet();
  for (const t of words) {
    const why = nets.add(t.text);
    if (why !== undefined) fail(t, why);
  }
  return nets;
}

function fail(t: Token, message: string): never {
  throw configError(t, "acl", message);
}
