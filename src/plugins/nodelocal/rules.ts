// The NOTRACK rules of node-local DNS, as node-cache's -setupiptables writes them: queries to the
// node-local addresses and their replies skip connection tracking, so they are never DNATed by
// kube-proxy (the transparent variant relies on that for the kube-dns Service IP) and never wait on a
// conntrack entry (the UDP races behind the 5 s timeouts). Two ways to write them, one per firewall the
// node may use (rules-iptables.ts, rules-nftables.ts); both mark what they add as clusterdns's.

/** One rule, whatever writes it. */
export interface Rule {
  /** raw: NOTRACK; filter: ACCEPT (iptables only: past a filter whose accept rules need a tracked state). */
  table: "raw" | "filter";
  chain: "PREROUTING" | "OUTPUT" | "INPUT";
  /** Matches the destination (queries) or the source (replies). */
  match: "daddr" | "saddr";
  address: string;
  proto: "udp" | "tcp";
  port: number;
}

/** The addresses and ports served, one entry each. */
export interface Endpoint {
  address: string;
  port: number;
}

/** Which of the rules: `queries: false` leaves out the NOTRACK rules of queries (a stop with no
 * successor, node.ts). */
export interface RuleSet {
  queries?: boolean;
}

/** Every rule for these endpoints; `accept` adds the filter table's ACCEPT rules (iptables). */
export function wantedRules(endpoints: readonly Endpoint[], accept: boolean, set: RuleSet = {}): Rule[] {
  const queries = set.queries ?? true;
  const out: Rule[] = [];
  for (const { address, port } of endpoints) {
    for (const proto of ["udp", "tcp"] as const) {
      const r = { address, port, proto };
      // Queries from pods, replies to them, and queries from the node itself (hostNetwork pods).
      if (queries) out.push({ ...r, table: "raw", chain: "PREROUTING", match: "daddr" });
      out.push({ ...r, table: "raw", chain: "OUTPUT", match: "saddr" });
      if (queries) out.push({ ...r, table: "raw", chain: "OUTPUT", match: "daddr" });
      if (accept) {
        out.push({ ...r, table: "filter", chain: "INPUT", match: "daddr" });
        out.push({ ...r, table: "filter", chain: "OUTPUT", match: "saddr" });
      }
    }
  }
  return out;
}

/** A firewall that holds the rules: set, check, remove. */
export interface RuleWriter {
  /** "nftables", "iptables-legacy", ...: what the logs say. */
  readonly name: string;
  /** Makes the node hold exactly these rules of ours (all of them unless `set` says otherwise);
   * resolves with how many it added or removed. */
  ensure(endpoints: readonly Endpoint[], set?: RuleSet): Promise<number>;
  /** Removes every rule of ours; resolves with how many there were. */
  remove(): Promise<number>;
  /** True when rules of ours are on the node (left by another clusterdns, running or not). */
  present(): Promise<boolean>;
}

/** What every rule of ours carries: an iptables comment, an nftables table name. */
export const MARK = "clusterdns-nodelocal";
export const NFT_TABLE = "clusterdns_nodelocal";
