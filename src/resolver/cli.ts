// `clusterdns resolve NAME`: the queries a pod's glibc sends for NAME, sent for real, and what it gets.

import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { isIP } from "node:net";
import { typeFromName } from "../dns/constants.ts";
import { parseResolvConf, podResolvConf, type ResolvConf } from "./resolv-conf.ts";
import { resolve, type Mode, type Trace, type TraceQuery } from "./resolve.ts";
import type { Server } from "./send.ts";
import { explainFrom } from "./explain.ts";
import { joinHostPort } from "../dns/host-port.ts";

export const RESOLVE_USAGE = `Usage: clusterdns resolve NAME [flags]
Shows the DNS queries glibc (getaddrinfo, as most programs) sends for NAME, in order, with the
answers, and the result it returns. Exit status: 0 resolved, 1 not resolved, 2 usage error.
  --resolv-conf FILE   resolver configuration (default /etc/resolv.conf, with LOCALDOMAIN/RES_OPTIONS)
  --namespace NS       use the resolv.conf of a pod in namespace NS:
                       search NS.svc.ZONE svc.ZONE ZONE, options ndots:5
  --zone ZONE          cluster domain for --namespace (default cluster.local)
  --server ADDR[:PORT] ask this server (port 53 by default) instead of the resolv.conf's nameservers
  --type TYPE          one query type per name (res_search), e.g. A, AAAA, SRV, TXT
  --mode ahosts|hosts  ahosts: getaddrinfo, A and AAAA together (default); hosts: like
                       'getent hosts', a whole walk of AAAA queries, then one of A queries
  --json               print the whole trace as JSON
  --no-explain         do not ask the server afterwards which objects produced the answer
                       (clusterdns answers with the Service, EndpointSlice or Pod behind a
                       cluster name; other servers say nothing)
`;

class UsageError extends Error {
  readonly code = "CDNS_ERR_RESOLVE_USAGE";
}

interface ResolveFlags {
  name: string;
  resolvConf?: string;
  namespace?: string;
  zone?: string;
  server?: Server;
  type?: number;
  mode?: Mode;
  json: boolean;
  help: boolean;
  explain: boolean;
}

const VALUED = new Set(["resolv-conf", "namespace", "zone", "server", "type", "mode"]);

function parseArgs(argv: string[]): ResolveFlags {
  const f: Partial<ResolveFlags> & { json: boolean; help: boolean; explain: boolean } = {
    json: false,
    help: false,
    explain: true,
  };
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      names.push(arg);
      continue;
    }
    const [, flag, inline] = m;
    if (flag === "json" || flag === "help" || flag === "h" || flag === "no-explain") {
      if (inline !== undefined) throw new UsageError(`--${flag} takes no value`);
      if (flag === "json") f.json = true;
      else if (flag === "no-explain") f.explain = false;
      else f.help = true;
      continue;
    }
    if (!VALUED.has(flag)) throw new UsageError(`unknown flag '${arg}'`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === "") throw new UsageError(`--${flag} needs a value`);
    switch (flag) {
      case "resolv-conf":
        f.resolvConf = value;
        break;
      case "namespace":
        if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) {
          throw new UsageError(`--namespace: '${value}' is not a namespace name (an RFC 1123 label)`);
        }
        f.namespace = value;
        break;
      case "zone":
        f.zone = value;
        break;
      case "server":
        f.server = parseServer(value);
        break;
      case "type": {
        const t = typeFromName(value);
        if (t === undefined) throw new UsageError(`--type: unknown record type '${value}'`);
        f.type = t;
        break;
      }
      case "mode":
        if (value !== "ahosts" && value !== "hosts")
          throw new UsageError(`--mode: '${value}' is not ahosts or hosts`);
        f.mode = value;
        break;
    }
  }
  if (f.help) return { ...f, name: "" };
  if (names.length !== 1) {
    throw new UsageError(
      names.length === 0 ? "a NAME to resolve is required" : `one NAME only, got: ${names.join(" ")}`,
    );
  }
  if (f.resolvConf !== undefined && f.namespace !== undefined) {
    throw new UsageError("--resolv-conf and --namespace exclude each other");
  }
  if (f.zone !== undefined && f.namespace === undefined) throw new UsageError("--zone needs --namespace");
  if (f.type !== undefined && f.mode !== undefined)
    throw new UsageError("--type and --mode exclude each other");
  return { ...f, name: names[0] };
}

/** "10.96.0.10", "10.96.0.10:1053", "::1", "[::1]:1053". */
export function parseServer(s: string): Server {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
  const [address, port] = m ? [m[1], m[2]] : [s, undefined];
  if (isIP(address) === 0) throw new UsageError(`--server: '${s}' is not ADDRESS or ADDRESS:PORT`);
  const n = port === undefined ? 53 : Number(port);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--server: bad port in '${s}'`);
  return { address, port: n };
}

function loadConf(f: ResolveFlags): { conf: ResolvConf; source: string } {
  if (f.namespace !== undefined) {
    const text = podResolvConf(f.namespace, f.zone ?? "cluster.local");
    return {
      conf: parseResolvConf(text, `<pod in ${f.namespace}>`),
      source: `a pod in namespace ${f.namespace}`,
    };
  }
  const file = f.resolvConf ?? "/etc/resolv.conf";
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    // glibc runs without a resolv.conf; a file named on the command line must exist.
    if (f.resolvConf !== undefined) throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
    text = "";
  }
  // This machine's own configuration takes the environment and host name into account, as glibc does.
  const env =
    f.resolvConf === undefined
      ? { LOCALDOMAIN: process.env.LOCALDOMAIN, RES_OPTIONS: process.env.RES_OPTIONS }
      : {};
  const opts = f.resolvConf === undefined ? { env, hostname: hostname() } : {};
  return { conf: parseResolvConf(text, file, opts), source: file };
}

/** Where the command writes; tests pass their own. */
export interface Output {
  write(s: string): unknown;
}

export async function resolveMain(
  argv: string[],
  out: Output = process.stdout,
  err: Output = process.stderr,
): Promise<number> {
  let flags: ResolveFlags;
  let loaded: { conf: ResolvConf; source: string };
  try {
    flags = parseArgs(argv);
    if (flags.help) {
      out.write(RESOLVE_USAGE);
      return 0;
    }
    loaded = loadConf(flags);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err.write(`clusterdns resolve: ${e.message}\n${RESOLVE_USAGE}`);
    return 2;
  }
  const { conf, source } = loaded;
  const servers = flags.server ? [flags.server] : undefined;
  const trace = await resolve(flags.name, { conf, servers, mode: flags.mode, type: flags.type });
  // The name the pod got its answer for, or else the first name it asked.
  const about = trace.result.answeredBy ?? trace.queries[0]?.name;
  const server = trace.queries[0]?.server;
  const explain =
    flags.explain && about !== undefined && server !== undefined
      ? { name: about, lines: await explainFrom(parseServer(server), about) }
      : undefined;
  if (flags.json) {
    const { notes, ...options } = conf;
    const asked = (servers ?? conf.nameservers.map((address) => ({ address, port: 53 }))).map(
      (x) => `${x.address}:${x.port}`,
    );
    out.write(
      JSON.stringify(
        { resolvConf: { source, ...options, notes }, servers: asked, ...trace, explain },
        null,
        2,
      ) + "\n",
    );
  } else {
    out.write(formatTrace(trace, conf, source, servers));
    if (explain && explain.lines.length > 0) {
      out.write(
        `explain ${explain.name} (from the server):\n${explain.lines.map((l) => `  ${l}\n`).join("")}`,
      );
    }
  }
  return trace.result.resolved ? 0 : 1;
}

/** The human form: the configuration, one line per query in the order sent, the result. */
export function formatTrace(t: Trace, conf: ResolvConf, source: string, servers?: Server[]): string {
  const out: string[] = [];
  const flags = (
    [
      ["rotate", conf.rotate],
      ["single-request", conf.singleRequest],
      ["single-request-reopen", conf.singleRequestReopen],
      ["edns0", conf.edns0],
      ["no-tld-query", conf.noTldQuery],
      ["no-aaaa", conf.noAaaa],
      ["use-vc", conf.useVc],
      ["trust-ad", conf.trustAd],
    ] as const
  )
    .filter(([, on]) => on)
    .map(([n]) => n);
  const ns = servers ? servers.map((s) => `${joinHostPort(s.address, s.port)} (--server)`) : conf.nameservers;
  out.push(`resolv.conf: ${source}`);
  out.push(`  nameserver ${ns.join(", ")}`);
  out.push(`  search ${conf.search.length ? conf.search.join(" ") : "(none)"}`);
  out.push(
    `  ndots:${conf.ndots} attempts:${conf.attempts} timeout:${conf.timeout}${flags.map((f) => " " + f).join("")}`,
  );
  for (const n of conf.notes) out.push(`  ${n.where}: ${n.message}`);
  const what =
    t.mode === "ahosts"
      ? `getaddrinfo (${t.types.join(" and ")} per name)`
      : t.mode === "hosts"
        ? "gethostbyname2 AF_INET6 then AF_INET (getent hosts)"
        : `res_search (${t.types[0]})`;
  out.push(`${what} for ${t.name}:`);
  const width = Math.max(10, ...t.queries.map((q) => q.name.length), ...t.notSent.map((s) => s.name.length));
  let sentBefore = 0;
  const notSentAt = (n: number) =>
    t.notSent
      .filter((s) => s.after === n)
      .forEach((s) => out.push(`   -  ${"".padEnd(5)} ${s.name.padEnd(width)}  not sent: ${s.reason}`));
  t.queries.forEach((q, i) => {
    notSentAt(sentBefore);
    out.push(`  ${String(i + 1).padStart(2)}  ${q.type.padEnd(5)} ${q.name.padEnd(width)}  ${describe(q)}`);
    sentBefore++;
  });
  notSentAt(sentBefore);
  if (t.queries.length === 0 && t.notSent.length === 0) out.push("  (no query sent)");
  const r = t.result;
  if (r.resolved) {
    const values = t.mode === "query" ? r.records : r.addresses;
    const alias = r.aliases.length ? ` (aliases ${r.aliases.join(", ")})` : "";
    out.push(`result: ${r.canonicalName ?? t.name}${alias}: ${values.join(", ")}`);
  } else {
    const via = r.answeredBy ? ` (${r.answeredBy} answered, but without ${t.types.join("/")} records)` : "";
    out.push(`result: not resolved: ${r.error ?? "no records"}${via}`);
  }
  return out.join("\n") + "\n";
}

function describe(q: TraceQuery): string {
  const where = `@${q.server}${q.transport === "tcp" ? " tcp" : ""}`;
  if (q.rcode === undefined) return `${where}  ${q.note ?? "no reply"}`;
  const answers = q.answers.map((text) => {
    const [owner, , type, ...rest] = text.split(" ");
    const value = `${type} ${rest.join(" ")}`;
    return owner.toLowerCase() === q.name.toLowerCase() ? value : `${owner} ${value}`;
  });
  const body =
    q.rcode === "NOERROR" && answers.length === 0
      ? "NOERROR, no records (NODATA)"
      : [q.rcode, ...answers].join("  ");
  return `${where}  ${body}${q.note ? `  (${q.note})` : ""}`;
}
