// rewrite's edns0 rules: EDNS options added to, changed in or removed from the query, for the plugins
// after rewrite and for forward, which sends them upstream (Request.upstreamOptions). CoreDNS's forms:
//   edns0 local set|replace|append CODE DATA      edns0 local unset CODE
//   edns0 nsid set|replace|append|unset
//   edns0 subnet set|replace|append SOURCE-PREFIX-V4 SOURCE-PREFIX-V6      edns0 subnet unset
// set puts the option in place of one with its code or adds it; replace only changes one that is
// there; append adds it when none is there; unset removes it. DATA is `0x` and hex digits, one of
// the variables {qname} {qtype} {client_ip} {client_port} {protocol} {server_ip} {server_port}, a
// metadata label ({plugin/NAME}, also spelled {/plugin/NAME} as in log), or else the text's octets. A
// label without a value (or with an empty one) leaves the option alone, as in CoreDNS.

import { isIP } from "node:net";
import type { Request } from "../../chain/request.ts";
import type { Directive, Token } from "../../corefile/types.ts";
import { configError } from "../../corefile/errors.ts";
import { EdnsOption } from "../../dns/constants.ts";
import { expandIPv6 } from "../../dns/name.ts";
import { plainAddress } from "../../dns/nets.ts";
import { isLabel, type MetaLabel } from "../metadata/labels.ts";

/** A metadata label of the block, by name; `at` is the word that names it. */
export type LabelOf = (label: string, at: Token) => MetaLabel;

export interface Option {
  code: number;
  data: Uint8Array;
}

type Action = "set" | "replace" | "append" | "unset";
const ACTIONS: readonly string[] = ["set", "replace", "append", "unset"] satisfies Action[];

export interface EdnsRule {
  action: Action;
  code: number;
  /** The option's data for one query; undefined: the rule does nothing to this query. */
  data: (req: Request) => Uint8Array | undefined;
  /** The data depends on who asked (the client's address or port, its transport, our address): the
   * upstream's reply to it may too, and is never replayed to another client. */
  perClient: boolean;
}

const VARIABLES: Record<string, { data: (req: Request) => Uint8Array; perClient: boolean }> = {
  "{qname}": { data: (r) => text(r.qname), perClient: false },
  "{qtype}": { data: (r) => u16(r.qtype), perClient: false },
  "{client_ip}": { data: (r) => addressOctets(r.remoteAddress), perClient: true },
  "{client_port}": { data: (r) => u16(r.remotePort), perClient: true },
  "{protocol}": { data: (r) => text(r.proto), perClient: true },
  "{server_ip}": { data: (r) => addressOctets(r.localAddress), perClient: true },
  "{server_port}": { data: (r) => u16(r.localPort), perClient: true },
};

/** Parses the words after `edns0`; `at` names the rule's line. */
export function parseEdnsRule(words: Token[], at: Token | Directive, labelOf: LabelOf): EdnsRule {
  const fail = (t: Token | Directive, message: string): never => {
    throw configError(t, "rewrite", message);
  };
  const [kind, actionWord, ...rest] = words;
  if (kind === undefined) return fail(at, "'edns0' takes local, nsid or subnet");
  if (actionWord === undefined || !ACTIONS.includes(actionWord.text)) {
    return fail(actionWord ?? kind, `'edns0 ${kind.text}' takes set, replace, append or unset`);
  }
  const action = actionWord.text as Action;
  const arity = (n: number, form: string) => {
    if (rest.length !== n) fail(actionWord, `'edns0 ${kind.text} ${action}' takes ${form}`);
  };
  switch (kind.text) {
    case "local": {
      arity(action === "unset" ? 1 : 2, action === "unset" ? "CODE" : "CODE DATA");
      const code =
        optionCode(rest[0]) ?? fail(rest[0], `'${rest[0].text}' is not an option code (0 to 0xffff)`);
      if (action === "unset") return { action, code, data: () => EMPTY, perClient: false };
      return { action, code, ...localData(rest[1], fail, labelOf) };
    }
    case "nsid":
      arity(0, "no more words");
      return { action, code: EdnsOption.NSID, data: () => EMPTY, perClient: false };
    case "subnet": {
      if (action === "unset") {
        arity(0, "no more words");
        return { action, code: EdnsOption.ECS, data: () => EMPTY, perClient: false };
      }
      arity(2, "SOURCE-PREFIX-V4 SOURCE-PREFIX-V6");
      const bits = (t: Token, max: number) =>
        /^\d{1,3}$/.test(t.text) && Number(t.text) <= max
          ? Number(t.text)
          : fail(t, `'${t.text}' is not a prefix length (0 to ${max})`);
      const v4 = bits(rest[0], 32);
      const v6 = bits(rest[1], 128);
      return {
        action,
        code: EdnsOption.ECS,
        data: (r) => clientSubnet(r.remoteAddress, v4, v6),
        perClient: true,
      };
    }
    default:
      return fail(kind, `unknown edns0 option '${kind.text}' (want local, nsid or subnet)`);
  }
}

/** Applies one rule to an option list, in place. */
export function applyEdnsRule(rule: EdnsRule, options: Option[], req: Request): void {
  const i = options.findIndex((o) => o.code === rule.code);
  if (rule.action === "unset") {
    if (i >= 0) options.splice(i, 1);
    return;
  }
  if (rule.action === "replace" ? i < 0 : rule.action === "append" && i >= 0) return;
  const data = rule.data(req);
  if (data === undefined) return;
  if (i >= 0) options[i] = { code: rule.code, data };
  else options.push({ code: rule.code, data });
}

const EMPTY = new Uint8Array(0);

function localData(
  t: Token,
  fail: (t: Token, m: string) => never,
  labelOf: LabelOf,
): Omit<EdnsRule, "action" | "code"> {
  const variable = VARIABLES[t.text];
  if (variable !== undefined) return variable;
  if (/^\{.*\}$/.test(t.text)) {
    const name = t.text.slice(t.text.startsWith("{/") ? 2 : 1, -1);
    if (!isLabel(name)) fail(t, `unknown variable '${t.text}' (a metadata label is {plugin/NAME})`);
    const label = labelOf(name, t);
    return {
      data: (r) => {
        const v = label.value(r);
        return v === undefined || v === "" ? undefined : text(v);
      },
      get perClient() {
        return label.perClient;
      },
    };
  }
  if (/^0x/i.test(t.text)) {
    const hex = t.text.slice(2);
    if (!/^([0-9a-f]{2})+$/i.test(hex)) fail(t, `'${t.text}' is not an even number of hex digits`);
    const bytes = Uint8Array.from(Buffer.from(hex, "hex"));
    return { data: () => bytes, perClient: false };
  }
  const bytes = text(t.text);
  return { data: () => bytes, perClient: false };
}

/** `0xffee` or `65518`. */
function optionCode(t: Token): number | undefined {
  const n = /^0x[0-9a-f]{1,4}$/i.test(t.text)
    ? parseInt(t.text, 16)
    : /^\d{1,5}$/.test(t.text)
      ? Number(t.text)
      : NaN;
  return n >= 0 && n <= 0xffff ? n : undefined;
}

/** RFC 7871 6: FAMILY, SOURCE PREFIX-LENGTH, SCOPE PREFIX-LENGTH 0, and the address cut to the prefix
 * (whole octets, the bits past the prefix zero). */
export function clientSubnet(address: string, v4: number, v6: number): Uint8Array {
  const ip = plainAddress(address);
  const family = isIP(ip) === 6 ? 2 : 1;
  const bits = family === 1 ? v4 : v6;
  const whole = addressOctets(ip);
  const octets = whole.slice(0, Math.ceil(bits / 8));
  if (bits % 8 !== 0) octets[octets.length - 1] &= 0xff << (8 - (bits % 8));
  return Uint8Array.of(0, family, bits, 0, ...octets);
}

/** An address as its 4 or 16 octets (an unknown one as none). */
function addressOctets(address: string): Uint8Array {
  const ip = plainAddress(address);
  if (isIP(ip) === 4) return Uint8Array.from(ip.split(".").map(Number));
  const hex = isIP(ip) === 6 ? expandIPv6(ip) : undefined;
  return hex === undefined ? EMPTY : Uint8Array.from(Buffer.from(hex, "hex"));
}

function text(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s, "utf8"));
}

function u16(n: number): Uint8Array {
  return Uint8Array.of(n >> 8, n & 0xff);
}
