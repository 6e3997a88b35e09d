// `clusterdns migrate kube-dns FILE` and `clusterdns migrate coredns FILE`: from the DNS server a cluster
// runs today to clusterdns, without touching the cluster (FILE is what kubectl prints, or `-`).

import { parseBlocks } from "../corefile/parser.ts";
import { configMapData, MigrateError, readInput, type Input } from "./input.ts";
import { translateKubeDns } from "./kube-dns.ts";
import { printReport, reportCorefile } from "./coredns.ts";

export const MIGRATE_USAGE = `Usage: clusterdns migrate kube-dns FILE [--domain DOMAIN]
       clusterdns migrate coredns FILE
FILE is a file, or - for stdin.
  kube-dns FILE    the kube-dns ConfigMap (kubectl -n kube-system get configmap kube-dns -o yaml):
                   prints the Corefile kubeadm makes of it (stubDomains, upstreamNameservers)
  coredns FILE     a Corefile, or the coredns ConfigMap (kubectl -n kube-system get configmap coredns
                   -o yaml): each line, and whether clusterdns serves it the same, differently or not
                   at all (docs/compatibility.md). Exit status 1 unless every line is the same.
  --domain DOMAIN  the cluster domain, for kube-dns (default cluster.local)
`;

class UsageError extends Error {}

export function migrateMain(argv: string[]): number {
  try {
    const { what, file, domain } = parseArgs(argv);
    if (what === "help") {
      process.stdout.write(MIGRATE_USAGE);
      return 0;
    }
    const input = readInput(file);
    return what === "kube-dns" ? kubeDns(input, domain) : coreDns(input);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`clusterdns migrate: ${err.message}\n${MIGRATE_USAGE}`);
      return 2;
    }
    if (err instanceof MigrateError || (err as { code?: string }).code === "CDNS_ERR_CONFIG") {
      process.stderr.write(`clusterdns migrate: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

function parseArgs(argv: string[]): { what: string; file: string; domain: string } {
  if (argv.length === 0 || argv.includes("-help") || argv.includes("--help") || argv.includes("-h"))
    return { what: "help", file: "", domain: "" };
  const [what, ...rest] = argv;
  if (what !== "kube-dns" && what !== "coredns")
    throw new UsageError(`'${what}': migrate from kube-dns or coredns`);
  let domain = "cluster.local";
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const m = /^--?domain(?:=(.*))?$/.exec(rest[i]);
    if (m && what === "kube-dns") {
      domain = m[1] ?? rest[++i] ?? "";
      if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(domain))
        throw new UsageError(`--domain: '${domain}' is not a domain`);
    } else if (rest[i] !== "-" && rest[i].startsWith("-")) throw new UsageError(`unknown flag '${rest[i]}'`);
    else files.push(rest[i]);
  }
  if (files.length !== 1) throw new UsageError(`migrate ${what} takes one FILE (or - for stdin)`);
  return { what, file: files[0], domain };
}

function kubeDns(input: Input, domain: string): number {
  const cm = configMapData(input);
  if (!cm)
    throw new MigrateError(
      `${input.name} is not a ConfigMap: give the kube-dns ConfigMap as kubectl prints it (kubectl -n kube-system get configmap kube-dns -o yaml)`,
    );
  if (cm.data.has("Corefile"))
    throw new MigrateError(
      `${input.name} holds a Corefile: it is CoreDNS's ConfigMap, so run clusterdns migrate coredns ${input.name}`,
    );
  const t = translateKubeDns(cm, input.name, domain);
  for (const w of t.warnings) process.stderr.write(`clusterdns migrate: ${w}\n`);
  process.stdout.write(t.corefile);
  return 0;
}

function coreDns(input: Input): number {
  const cm = configMapData(input);
  let text = input.text;
  let file = input.name;
  if (cm) {
    if (!cm.data.has("Corefile"))
      throw new MigrateError(
        `${input.name} is a ConfigMap without data.Corefile${cm.data.has("stubDomains") || cm.data.has("upstreamNameservers") ? ": it is kube-dns's, so run clusterdns migrate kube-dns " + input.name : ""}`,
      );
    const { firstLine, literal } = cm.placed("Corefile");
    // A `|` block keeps the file's lines: blank lines in front give the Corefile the file's numbering.
    if (literal) text = "\n".repeat(firstLine - 1) + cm.data.get("Corefile")!;
    else {
      text = cm.data.get("Corefile")!;
      file = `${input.name} (data.Corefile)`;
    }
  }
  // An environment variable that is not set here is kept as written: the pod has it, this shell need not.
  const env = new Proxy(process.env, { get: (e, name: string) => e[name] ?? `{$${name}}` });
  // import paths are relative to the Corefile's folder (stdin's: the current one).
  const blocks = parseBlocks(text, file, env);
  const { text: report, status } = printReport(reportCorefile(blocks));
  process.stdout.write(report);
  return status;
}
