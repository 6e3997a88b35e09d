// `clusterdns top [--server HOST:PORT] [--window 1m|10m|1h] [--token-file FILE] [--once]`: the insights
// page in a terminal, read from the JSON API every 2 s (or once, for scripts).

import { readFileSync } from "node:fs";
import type { Report } from "./report.ts";
import { DEFAULT_INSIGHTS_ADDRESS } from "./setup.ts";

const USAGE = `usage: clusterdns top [--server HOST:PORT] [--window 1m|10m|1h] [--token-file FILE] [--once]
  Shows an insights listener's view (default ${DEFAULT_INSIGHTS_ADDRESS}), live; --once prints it once.
  The token is read from --token-file or $CLUSTERDNS_INSIGHTS_TOKEN.
`;

interface TopOptions {
  server: string;
  window: string;
  token: string | undefined;
  once: boolean;
}

function parse(argv: string[]): TopOptions | string {
  const o: TopOptions = {
    server: DEFAULT_INSIGHTS_ADDRESS,
    window: "1m",
    token: process.env.CLUSTERDNS_INSIGHTS_TOKEN,
    once: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--server") o.server = value();
    else if (a === "--window") o.window = value();
    else if (a === "--token-file") o.token = readFileSync(value(), "utf8").trim();
    else if (a === "--once") o.once = true;
    else if (a === "--help" || a === "-help") return "";
    else return `unknown argument '${a}'`;
  }
  if (!["1m", "10m", "1h"].includes(o.window)) return `--window must be 1m, 10m or 1h`;
  return o;
}

const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
const pad = (s: string | number, n: number) => String(s).slice(0, n).padEnd(n);
const num = (v: number | string, n: number) => String(v).padStart(n);

/** The report as terminal lines, fitted to `width` columns. */
export function render(r: Report, server: string, width = 100): string[] {
  const t = r.totals;
  const out = [
    `clusterdns insights @ ${server}  window ${r.window}  up ${r.uptimeSeconds}s  ${r.attribution.pods} pods`,
    `${t.qps} q/s   cache hits ${pct(t.cacheHitRatio)}   NXDOMAIN ${pct(t.nxdomainRatio)}   ` +
      `wasted on search lists ${pct(t.wastedRatio)}   SERVFAIL ${pct(t.servfailRatio)}` +
      (r.topSampledEvery > 1 ? `   top lists: 1 query in ${r.topSampledEvery}` : ""),
    "",
    `${pad("WORKLOAD", 40)} ${num("QUERIES", 8)} ${num("NXDOMAIN", 8)} ${num("WASTED", 7)}  FIX`,
  ];
  for (const w of r.workloads.slice(0, 10)) {
    const line = `${pad(w.workload, 40)} ${num(w.queries, 8)} ${num(w.nxdomain, 8)} ${num(w.wasted, 7)}  ${w.fix}`;
    out.push(w.spike ? `${line}  NXDOMAIN SPIKE` : line);
  }
  out.push("", "NAMES THAT COST SEARCH-LIST WALKS");
  for (const w of r.wastedNames.slice(0, 8))
    out.push(`  ${w.name} cost ${w.nxdomain} NXDOMAIN from ${w.workload}`);
  out.push("", `${pad("TOP NAMES", 48)}  TOP NXDOMAIN NAMES`);
  for (let i = 0; i < 8; i++) {
    const a = r.topNames[i];
    const b = r.topNxdomain[i];
    if (!a && !b) break;
    out.push(
      `${pad(a ? `${num(a.count - a.error, 7)} ${a.name}` : "", 48)}  ${b ? `${num(b.count - b.error, 7)} ${b.name}` : ""}`,
    );
  }
  out.push("", "TOP CLIENTS");
  for (const c of r.topClients.slice(0, 5))
    out.push(`  ${num(c.count - c.error, 7)} ${pad(c.address, 40)} ${c.workload}`);
  out.push("", "UPSTREAMS (last minute)");
  for (const u of r.upstreams) {
    out.push(
      // `plugin` is missing from servers older than grpc's upstreams in insights: forward's then.
      `  ${pad(u.plugin ?? "forward", 7)} ${pad(u.to, 24)} ${u.requests} q, ${u.failures} failed, ${u.servfail} SERVFAIL, mean ${u.latencyMs ?? "-"} ms`,
    );
  }
  for (const s of r.servfailCauses) out.push(`SERVFAIL: ${s.count} from ${s.plugin}: ${s.cause}`);
  return out.map((l) => l.slice(0, width));
}

async function fetchReport(o: TopOptions): Promise<Report> {
  const headers: Record<string, string> = o.token ? { Authorization: `Bearer ${o.token}` } : {};
  const res = await fetch(`http://${o.server}/api/insights?window=${o.window}`, { headers });
  if (!res.ok) throw new Error(`${o.server} answered HTTP ${res.status}: ${(await res.text()).trim()}`);
  return (await res.json()) as Report;
}

export async function topMain(argv: string[]): Promise<number> {
  let o: TopOptions | string;
  try {
    o = parse(argv);
  } catch (err) {
    o = (err as Error).message;
  }
  if (o === "") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (typeof o === "string") {
    process.stderr.write(`clusterdns top: ${o}\n${USAGE}`);
    return 2;
  }
  for (;;) {
    let lines: string[];
    try {
      lines = render(await fetchReport(o), o.server, process.stdout.columns ?? 120);
    } catch (err) {
      process.stderr.write(`clusterdns top: ${(err as Error).message}\n`);
      if (o.once) return 1;
      lines = [`cannot read ${o.server}: ${(err as Error).message}`];
    }
    if (o.once) {
      process.stdout.write(`${lines.join("\n")}\n`);
      return 0;
    }
    // Home, clear: one screen redrawn in place.
    process.stdout.write(`\x1b[H\x1b[2J${lines.join("\n")}\n`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}
