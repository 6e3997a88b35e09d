// The query mixes of the benchmark, each deterministic from the cluster and a seed:
// - "hot": bench/cluster-gen.ts's mix, under the answer cache's default capacity (after a warm-up,
//   every query is a hit);
// - "over": over-capacity, about 200k queries over about 51.5k distinct questions, more than `cache`'s
//   default capacity (9,984 success and 9,984 denial entries), shaped as a cluster's traffic: ClusterIP A
//   56%, headless A 8%, StatefulSet pod names 4%, pod A 6%, SRV 10%, AAAA NODATA 6%, and 10% NXDOMAIN
//   search-list expansions of external names; popularity Zipf-distributed, about half the distinct
//   questions asked once;
// - "unique": 300k random names under the cluster's namespaces, all NXDOMAIN (random-subdomain
//   traffic, which no cache absorbs).

import { rng } from "../test/helpers/rng.ts";
import type { Cluster, ClusterNames } from "./cluster-gen.ts";

export const MIXES = ["hot", "over", "unique"] as const;
export type MixId = (typeof MIXES)[number];

export const MIX_TITLES: Record<MixId, string> = {
  hot: "hot mix (answers cached after a 2 s warm-up)",
  over: "over-capacity mix (more distinct questions than `cache` holds)",
  unique: "unique names (random names under the namespaces, all NXDOMAIN)",
};

/** The dnsperf lines ("NAME TYPE") of a mix. */
export function mixQueries(cluster: Cluster, mix: MixId, seed = 1): string[] {
  if (mix === "hot") return cluster.queries;
  if (mix === "over") return overCapacityMix(cluster.names, seed);
  return uniqueNamesMix(cluster.names, seed);
}

/** The mix BENCH_MIX names (hot by default), for the tools that run one. */
export function mixChoice(): MixId {
  const v = process.env.BENCH_MIX ?? "hot";
  if (!(MIXES as readonly string[]).includes(v)) throw new Error(`BENCH_MIX=${v}: want ${MIXES.join(", ")}`);
  return v as MixId;
}

const OVER_QUERIES = 200_000;

/**
 * One kind of question of the over-capacity mix: its share of the queries, and at 10k services how many
 * distinct questions it asks and how many of those it asks once. The rest of its distinct questions
 * are asked at least twice, the queries left over spread over them by Zipf popularity. A smaller
 * cluster has fewer names: the distinct counts shrink with it (the log says what the mix holds).
 */
interface Kind {
  share: number;
  distinct: number;
  once: number;
  questions: (n: ClusterNames) => string[];
}

const KINDS: Kind[] = [
  { share: 0.56, distinct: 8000, once: 1500, questions: (n) => n.clusterIP.map((q) => `${q} A`) },
  { share: 0.08, distinct: 1400, once: 500, questions: (n) => n.headless.map((q) => `${q} A`) },
  { share: 0.04, distinct: 3500, once: 1400, questions: (n) => n.hostnames.map((q) => `${q} A`) },
  { share: 0.06, distinct: 9000, once: 6500, questions: (n) => n.pods.map((q) => `${q} A`) },
  { share: 0.1, distinct: 13_000, once: 6500, questions: (n) => n.srv.map((q) => `${q} SRV`) },
  { share: 0.06, distinct: 7500, once: 3200, questions: (n) => n.clusterIP.map((q) => `${q} AAAA`) },
];
/** The rest of the queries: a pod's search-list expansions of an outside name, three per lookup. */
const SEARCH_SHARE = 0.1;

/** Outside names that pods look up most; a long tail of partner names follows them. */
const POPULAR_OUTSIDE = [
  "api.github.com",
  "github.com",
  "registry-1.docker.io",
  "auth.docker.io",
  "production.cloudflare.docker.com",
  "ghcr.io",
  "quay.io",
  "gcr.io",
  "storage.googleapis.com",
  "oauth2.googleapis.com",
  "sts.amazonaws.com",
  "s3.amazonaws.com",
  "s3.us-east-1.amazonaws.com",
  "dynamodb.us-east-1.amazonaws.com",
  "sqs.us-east-1.amazonaws.com",
  "login.microsoftonline.com",
  "management.azure.com",
  "api.stripe.com",
  "hooks.slack.com",
  "api.twilio.com",
  "sentry.io",
  "o0.ingest.sentry.io",
  "api.datadoghq.com",
  "http-intake.logs.datadoghq.com",
  "pypi.org",
  "files.pythonhosted.org",
  "registry.npmjs.org",
  "proxy.golang.org",
  "repo.maven.apache.org",
  "api.openai.com",
  "smtp.sendgrid.net",
  "www.google.com",
];
const OUTSIDE_NAMES = 3000;

function overCapacityMix(names: ClusterNames, seed: number): string[] {
  const random = rng(seed + 101);
  // A unit is one query, or the three queries of one search-list walk, sent back to back.
  const units: string[][] = [];
  for (const kind of KINDS) {
    const questions = shuffled(kind.questions(names), random);
    const scale = Math.min(1, (0.95 * questions.length) / kind.distinct);
    const distinct = Math.floor(kind.distinct * scale);
    const once = Math.floor(kind.once * scale);
    const repeated = distinct - once;
    const queries = Math.round(kind.share * OVER_QUERIES);
    for (const q of questions.slice(repeated, distinct)) units.push([q]);
    for (let i = 0; i < repeated; i++) units.push([questions[i]], [questions[i]]);
    if (repeated === 0) continue;
    const pick = zipf(repeated, random);
    for (let i = once + 2 * repeated; i < queries; i++) units.push([questions[pick()]]);
  }
  // Search lists: a pod in NS asking for an outside name with fewer than 5 dots tries
  // NAME.NS.svc.cluster.local, NAME.svc.cluster.local and NAME.cluster.local before NAME itself.
  const outside = [
    ...POPULAR_OUTSIDE,
    ...Array.from(
      { length: OUTSIDE_NAMES - POPULAR_OUTSIDE.length },
      (_, i) => `api.partner-${i}.example.com`,
    ),
  ];
  const zone = names.zone;
  const pickOutside = zipf(outside.length, random);
  for (let i = 0; i < Math.round((SEARCH_SHARE * OVER_QUERIES) / 3); i++) {
    const name = outside[pickOutside()];
    const ns = names.namespaces[Math.floor(random() * names.namespaces.length)];
    units.push([`${name}.${ns}.svc.${zone} A`, `${name}.svc.${zone} A`, `${name}.${zone} A`]);
  }
  return shuffled(units, random).flat();
}

const LABEL = "abcdefghijklmnopqrstuvwxyz0123456789";
const UNIQUE_QUERIES = 300_000;

function uniqueNamesMix(names: ClusterNames, seed: number): string[] {
  const random = rng(seed + 202);
  const zone = names.zone;
  const seen = new Set<string>();
  while (seen.size < UNIQUE_QUERIES) {
    let label = "";
    for (let i = 0; i < 7; i++) label += LABEL[Math.floor(random() * LABEL.length)];
    const ns = names.namespaces[Math.floor(random() * names.namespaces.length)];
    // Service names are svc-N: a label without a dash is no service's.
    seen.add(`${label}.${ns}.svc.${zone} A`);
  }
  return [...seen];
}

/** A sampler of ranks 0..n-1 with Zipf popularity (exponent 1): rank k is asked in proportion to 1/(k+1). */
function zipf(n: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) cumulative[k] = total += 1 / (k + 1);
  return () => {
    const u = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** A shuffled copy (Fisher-Yates). */
function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** How many distinct questions a mix holds, and how many of them it asks once. */
export function mixShape(queries: string[]): { distinct: number; once: number } {
  const counts = new Map<string, number>();
  for (const q of queries) counts.set(q, (counts.get(q) ?? 0) + 1);
  let once = 0;
  for (const c of counts.values()) if (c === 1) once++;
  return { distinct: counts.size, once };
}
