// The options forward and grpc share, parsed alike (CoreDNS's forms): FROM, TO..., `except`,
// `policy`, `tls`. `plugin` names the directive in the errors, which give the file:line.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Directive, Token } from "../../corefile/types.ts";
import type { PolicyName } from "./policy.ts";
import type { TlsSettings } from "./tcp-conn.ts";
import { POLICIES } from "./policy.ts";
import { argCount } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { parseKey } from "../../corefile/keys.ts";
import { canonical, isSubdomain } from "../../dns/name.ts";

/** CoreDNS's limit on the upstreams of one forward or grpc. */
const MAX_UPSTREAMS = 15;

/** FROM and TO... of `forward`/`grpc FROM TO...`: the zone, and the upstreams `parse` makes of each TO,
 * at most 15. */
export function fromTo<T>(d: Directive, plugin: string, parse: (t: Token) => T[]): { from: string; to: T[] } {
  argCount(d, plugin, 2, Infinity);
  const to = d.args.slice(1).flatMap(parse);
  if (to.length > MAX_UPSTREAMS)
    throw configError(d, plugin, `${to.length} upstreams; at most ${MAX_UPSTREAMS} are allowed`);
  return { from: zoneName(d.args[0], plugin), to };
}

/** except NAMES... */
export function exceptNames(opt: Directive, plugin: string): string[] {
  argCount(opt, plugin, 1, Infinity);
  return opt.args.map((t) => zoneName(t, plugin));
}

/** Whether `qname` goes upstream: under FROM and under no `except` name; FROM itself always does
 * (CoreDNS's rule for forward and grpc). Names are canonical. */
export function sendsName(o: { from: string; except: readonly string[] }, qname: string): boolean {
  if (!isSubdomain(qname, o.from)) return false;
  if (qname === o.from) return true;
  for (const e of o.except) if (isSubdomain(qname, e)) return false;
  return true;
}

/** policy random|round_robin|sequential */
export function policyOption(opt: Directive, plugin: string): PolicyName {
  argCount(opt, plugin, 1, 1);
  const p = opt.args[0].text;
  if (!(POLICIES as readonly string[]).includes(p)) {
    throw configError(opt.args[0], plugin, `unknown policy '${p}' (want ${POLICIES.join(", ")})`);
  }
  return p as PolicyName;
}

/** tls [CERT KEY] [CA], CoreDNS's forms: none (the system's CAs), CA, CERT KEY, CERT KEY CA. The
 * files are read now: a missing one stops start-up here, not at the first query. */
export function tlsOption(
  opt: Directive,
  o: { root: string; was: TlsSettings; plugin: string },
): TlsSettings {
  argCount(opt, o.plugin, 0, 3);
  const [a, b, c] = opt.args.map((t) => readPem(t, o.root, o.plugin));
  if (opt.args.length === 1) return { ...o.was, ca: a };
  if (opt.args.length >= 2) return { ...o.was, cert: a, key: b, ca: c };
  return o.was;
}

function readPem(t: Token, root: string, plugin: string): Buffer {
  try {
    return readFileSync(resolve(root, t.text));
  } catch (err) {
    throw configError(t, plugin, `tls: cannot read '${t.text}': ${(err as Error).message}`);
  }
}

/** FROM or a name of `except`/`domain`: canonical; a CIDR stands for its first reverse zone. */
export function zoneName(t: Token, plugin: string): string {
  if (t.text.includes("/")) return parseKey(t)[0].zone;
  const z = canonical(t.text);
  if (z !== "." && !/^([a-z0-9_*-]{1,63}\.)+$/.test(z))
    throw configError(t, plugin, `invalid domain '${t.text}'`);
  return z;
}
