// `clusterdns migrate kube-dns FILE` and `clusterdns migrate coredns FILE`: from the DNS server a cluster
// runs today to clusterdns, without touching the cluster (FILE is what kubectl prints, or `-`).

import { layOut } from "../corefile/layout.ts";
import { configMapData, InputError, readInput, type Input } from "../corefile/configmap.ts";
import { translateKubeDns } from "./kube-dns.ts";
import { checkCoreDns, printReport } from "./coredns.ts";

export const MIGRATE_USAGE = `Usage: clusterdns migrate kube-dns FILE [--domain DOMAIN]
       clusterdns migrate coredns FILE [FILE...] [--strict]
FILE is a file, or - for stdin.
  kube-dns FILE    the kube-dns ConfigMap (kubectl -n kube-system get configmap kube-dns -o yaml):
                   prints the Corefile kubeadm makes of it (stubDomains, upstreamNameservers).
                   Exit status 1 when a setting cannot be carried over (said on stderr).
  coredns FILE...  a Corefile, or the coredns ConfigMap (kubectl -n kube-system get configmap coredns
                   -o yaml), then any ConfigMap mounted beside it (coredns-custom): each line, and
                   whether clusterdns serves it the same, differently (with how) or not at all, as
                   -validate sets it up (docs/compatibility.md). Exit status 0 when every line runs,
                   1 when one does not or would be lost (an import that matches no file).
  --strict         coredns: exit 1 on any difference too
  --domain DOMAIN  the cluster domain, for kube-dns (default cluster.local)
`;

class UsageError extends Error {}

export async function migrateMain(argv: string[]): Promise<number> {
  try {
    const { what, files, domain, strict } = parseArgs(argv);
    if (what === "help") {
      process.stdout.write(MIGRATE_USAGE);
      return 0;
    }
    const inputs = files.map(readInput);
    return what === "kube-dns" ? kubeDns(inputs[0], domain) : await coreDns(inputs, strict);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`clusterdns migrate: ${err.message}\n${MIGRATE_USAGE}`);
      return 2;
    }
    if (err instanceof InputError || (err as { code?: string }).code === "CDNS_ERR_CONFIG") {
      process.stderr.write(`clusterdns migrate: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

interface Args {
  what: string;
  files: string[];
  domain: string;
  strict: boolean;
}

function parseArgs(argv: string[]): Args {
  if (argv.includes("-help") || argv.includes("--help") || argv.includes("-h"))
    return { what: "help", files: [], domain: "", strict: false };
  // Nothing to migrate from is a usage error, as a bare `clusterdns resolve` is.
  if (argv.length === 0) throw new UsageError("say what to migrate from: kube-dns or coredns");
  const [what, ...rest] = argv;
  if (what !== "kube-dns" && what !== "coredns")
    throw new UsageError(`'${what}': migrate from kube-dns or coredns`);
  let domain = "cluster.local";
  let strict = false;
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const m = /^--?domain(?:=(.*))?$/.exec(rest[i]);
    if (/^--?strict$/.test(rest[i]) && what === "coredns") strict = true;
    else if (m && what === "kube-dns") {
      domain = m[1] ?? rest[++i] ?? "";
      if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(domain))
        throw new UsageError(`--domain: '${domain}' is not a domain`);
    } else if (rest[i] !== "-" && rest[i].startsWith("-")) throw new UsageError(`unknown flag '${rest[i]}'`);
    else files.push(rest[i]);
  }
  if (what === "kube-dns" && files.length !== 1)
    throw new UsageError("migrate kube-dns takes one FILE (or - for stdin)");
  if (files.length === 0) throw new UsageError("migrate coredns takes a FILE (or - for stdin)");
  return { what, files, domain, strict };
}

function kubeDns(input: Input, domain: string): number {
  const cm = configMapData(input);
  if (!cm)
    throw new InputError(
      `${input.name} is not a ConfigMap: give the kube-dns ConfigMap as kubectl prints it (kubectl -n kube-system get configmap kube-dns -o yaml)`,
    );
  if (cm.data.has("Corefile"))
    throw new InputError(
      `${input.name} holds a Corefile: it is CoreDNS's ConfigMap, so run clusterdns migrate coredns ${input.name}`,
    );
  const t = translateKubeDns(cm, input.name, domain);
  for (const w of t.warnings) process.stderr.write(`clusterdns migrate: ${w}\n`);
  process.stdout.write(t.corefile);
  return t.lossy ? 1 : 0;
}

async function coreDns(inputs: Input[], strict: boolean): Promise<number> {
  const only = inputs.length === 1 ? configMapData(inputs[0]) : undefined;
  if (only && !only.data.has("Corefile"))
    throw new InputError(
      `${inputs[0].name} is a ConfigMap without data.Corefile${only.data.has("stubDomains") || only.data.has("upstreamNameservers") ? ": it is kube-dns's, so run clusterdns migrate kube-dns " + inputs[0].name : ""}`,
    );
  const source = layOut(inputs);
  try {
    const checked = await checkCoreDns(source);
    if ("errors" in checked) {
      for (const e of checked.errors) process.stderr.write(`clusterdns migrate: ${source.shown(e)}\n`);
      return 1;
    }
    for (const w of checked.unread)
      process.stderr.write(`clusterdns migrate: warning: ${w.file}:${w.line}: ${w.message}\n`);
    const lines = checked.lines.map((l) => ({
      ...l,
      ...source.placed(l.file, l.line),
      // Paths into the ConfigMap were read from a temporary folder: shown as the pod has them.
      text: source.shown(l.text),
      note: l.note && source.shown(l.note),
    }));
    const { text, status } = printReport(lines, { strict });
    process.stdout.write(text);
    return status;
  } finally {
    source.close();
  }
}
