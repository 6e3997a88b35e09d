// The rules through nft: one table of ours (inet, so IPv4 and IPv6 together) replaced in one
// transaction, checked against what nft listed right after it was written. Only the NOTRACK rules: an
// accept in our table cannot overrule a drop in another (every table's chains run), so a firewall of the
// node that drops untracked DNS must let it through itself.

import { isIPv6 } from "node:net";
import { mustRun, type Run } from "./command.ts";
import { NFT_TABLE, wantedRules, type Endpoint, type Rule, type RuleSet, type RuleWriter } from "./rules.ts";

export function nftablesWriter(run: Run): RuleWriter {
  /** `nft list table` as it was after our last write: a different listing means it was changed. */
  let written: string | undefined;
  let lastScript: string | undefined;
  const list = async () => {
    const r = await run("nft", ["list", "table", "inet", NFT_TABLE]);
    return r.code === 0 ? r.stdout : undefined;
  };
  return {
    name: "nftables",
    async ensure(endpoints: readonly Endpoint[], set?: RuleSet) {
      const script = tableScript(wantedRules(endpoints, false, set));
      const now = await list();
      if (now !== undefined && now === written && script === lastScript) return 0;
      // Creating the table first makes the delete valid whether or not it was there.
      await mustRun(
        run,
        "nft",
        ["-f", "-"],
        `table inet ${NFT_TABLE}\ndelete table inet ${NFT_TABLE}\n${script}`,
      );
      written = await list();
      lastScript = script;
      return 1;
    },
    async remove() {
      const r = await run("nft", ["delete", "table", "inet", NFT_TABLE]);
      written = undefined;
      return r.code === 0 ? 1 : 0;
    },
    async present() {
      return (await list()) !== undefined;
    },
  };
}

/** The whole table, in nft's language. */
export function tableScript(rules: readonly Rule[]): string {
  const chain = (name: string, hook: string, of: Rule[]) =>
    `  chain ${name} {\n    type filter hook ${hook} priority raw; policy accept;\n` +
    of.map((r) => `    ${match(r)} notrack\n`).join("") +
    "  }\n";
  return (
    `table inet ${NFT_TABLE} {\n` +
    chain(
      "prerouting",
      "prerouting",
      rules.filter((r) => r.chain === "PREROUTING"),
    ) +
    chain(
      "output",
      "output",
      rules.filter((r) => r.chain === "OUTPUT"),
    ) +
    "}\n"
  );
}

function match(r: Rule): string {
  const family = isIPv6(r.address) ? "ip6" : "ip";
  const port = r.match === "daddr" ? "dport" : "sport";
  return `${family} ${r.match} ${r.address} ${r.proto} ${port} ${r.port}`;
}
