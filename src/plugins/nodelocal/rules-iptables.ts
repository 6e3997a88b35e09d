// The rules through iptables (legacy or its nf_tables backend, whichever binary is named), IPv4 and
// IPv6, each carrying the comment MARK so that only ours are ever changed or removed.

import { isIPv6 } from "node:net";
import { mustRun, type Run } from "./command.ts";
import { MARK, wantedRules, type Endpoint, type Rule, type RuleSet, type RuleWriter } from "./rules.ts";

/** `binary` is iptables, iptables-legacy or iptables-nft; the ip6tables one is named alike. */
export function iptablesWriter(run: Run, binary: string): RuleWriter {
  const families = [binary, binary.replace("iptables", "ip6tables")];

  /** Our rules now on the node, from the -save listing of both families, as -D arguments. */
  const ours = async (): Promise<{ bin: string; table: string; args: string[] }[]> => {
    const out = [];
    for (const bin of families) {
      const r = await run(`${bin}-save`, []);
      if (r.code !== 0) continue;
      let table = "";
      for (const line of r.stdout.split("\n")) {
        if (line.startsWith("*")) table = line.slice(1);
        if (line.startsWith("-A ") && line.includes(`--comment ${MARK}`)) {
          out.push({ bin, table, args: line.slice(3).trim().split(/\s+/) });
        }
      }
    }
    return out;
  };

  return {
    name: binary,
    async ensure(endpoints: readonly Endpoint[], set?: RuleSet) {
      const wanted = wantedRules(endpoints, true, set);
      const keys = new Set(wanted.map(key));
      let changes = 0;
      for (const r of await ours()) {
        const parsed = parseSaved(r.table, r.args);
        if (parsed && keys.has(key(parsed))) continue;
        await mustRun(run, r.bin, ["-w", "5", "-t", r.table, "-D", ...r.args]);
        changes++;
      }
      for (const rule of wanted) {
        const bin = isIPv6(rule.address) ? families[1] : families[0];
        const spec = ruleArgs(rule);
        const check = await run(bin, ["-w", "5", "-t", rule.table, "-C", rule.chain, ...spec]);
        if (check.code === 0) continue;
        // First in its chain, as node-cache puts them: ahead of any rule that would track or drop.
        await mustRun(run, bin, ["-w", "5", "-t", rule.table, "-I", rule.chain, "1", ...spec]);
        changes++;
      }
      return changes;
    },
    async remove() {
      const found = await ours();
      for (const r of found) {
        // Already gone (another process removed it meanwhile) is no failure.
        await run(r.bin, ["-w", "5", "-t", r.table, "-D", ...r.args]);
      }
      return found.length;
    },
    async present() {
      return (await ours()).length > 0;
    },
  };
}

function ruleArgs(r: Rule): string[] {
  const prefix = isIPv6(r.address) ? 128 : 32;
  const where = r.match === "daddr" ? ["-d", `${r.address}/${prefix}`] : ["-s", `${r.address}/${prefix}`];
  const port = r.match === "daddr" ? "--dport" : "--sport";
  const target = r.table === "raw" ? "NOTRACK" : "ACCEPT";
  return [
    ...where,
    "-p",
    r.proto,
    "-m",
    r.proto,
    port,
    `${r.port}`,
    "-m",
    "comment",
    "--comment",
    MARK,
    "-j",
    target,
  ];
}

function key(r: Rule): string {
  return `${r.table} ${r.chain} ${r.match} ${r.address} ${r.proto} ${r.port}`;
}

/** A rule of ours as iptables-save prints it ("PREROUTING -d 169.254.20.10/32 -p udp -m udp --dport
 * 53 -m comment --comment clusterdns-nodelocal -j NOTRACK"), or undefined if it is not one we write. */
function parseSaved(table: string, args: string[]): Rule | undefined {
  const at = (flag: string) => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const chain = args[0];
  const daddr = at("-d");
  const saddr = at("-s");
  const proto = at("-p");
  const port = at("--dport") ?? at("--sport");
  if (table !== "raw" && table !== "filter") return undefined;
  if (chain !== "PREROUTING" && chain !== "OUTPUT" && chain !== "INPUT") return undefined;
  if ((proto !== "udp" && proto !== "tcp") || port === undefined) return undefined;
  const address = (daddr ?? saddr)?.replace(/\/(32|128)$/, "");
  if (address === undefined) return undefined;
  return { table, chain, match: daddr ? "daddr" : "saddr", address, proto, port: Number(port) };
}
