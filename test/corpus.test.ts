// The corpus (test/fixtures/corpus/): Corefiles and ConfigMaps as Kubernetes distributions and docs
// publish them, each with NAME.source saying where it was published and what clusterdns must make of it:
//   verdict: runs | runs with notes | refused, and why
//   validate: exit N[, says /RE/]                   `clusterdns -validate -conf FILE`
//   migrate coredns|kube-dns: exit N[, says /RE/]   `clusterdns migrate KIND FILE`
//   with: OTHER                                     a coredns-custom ConfigMap, read with OTHER's Corefile
//   dig: NAME TYPE ANSWER|NXDOMAIN                  asked of a real start-up
//   address: IP                                     where it is asked (a node-local bind), else 127.0.0.1
//
// The start-ups run each Corefile as published (ports 53, 8080, 8181, 9153 and /etc/resolv.conf as
// they are) in a network namespace of their own: the test API server holds zones/demo-cluster.yaml,
// and Knot, in a second namespace that owns every upstream address the corpus names, serves example.org.
// A ConfigMap's other keys are laid out beside the Corefile as its Deployment mounts them (k3s mounts
// them at /etc/coredns/, which the test replaces by its folder); a coredns-custom ConfigMap's keys go in
// custom/, where AKS and k3s mount it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { joinNetns, readObjects, startApiInNetns, startClusterdnsInNetns } from "./helpers/netns-cluster.ts";
import { parseDig } from "./helpers/dig.ts";
import { parseYaml } from "./helpers/manifests.ts";
import { ROOT } from "./helpers/server.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";

const DIR = join(ROOT, "test", "fixtures", "corpus");
const BIN = join(ROOT, "bin", "clusterdns");
const FIXTURE = /\.(yaml|Corefile|yml\.j2)$/;
const run = promisify(execFile);

interface Check {
  tool: string;
  exit: number;
  says?: RegExp;
}
interface Fixture {
  file: string;
  name: string;
  verdict: string;
  with?: string;
  validate: Check;
  migrate: Check & { kind: "coredns" | "kube-dns" };
  digs: { name: string; type: string; want: string }[];
  address?: string;
}

function readFixture(file: string): Fixture {
  const name = file.replace(FIXTURE, "");
  const lines = readFileSync(join(DIR, `${name}.source`), "utf8").split("\n");
  const field = (key: string) => lines.find((l) => l.startsWith(`${key}: `))?.slice(key.length + 2);
  const check = (key: RegExp): Check & { kind: string } => {
    const line = lines.find((l) => key.test(l));
    assert.ok(line, `${name}.source: a line ${key}`);
    const m = /^(validate|migrate (coredns|kube-dns)): exit (\d)(?:, says \/(.*)\/)?$/.exec(line);
    assert.ok(m, `${name}.source: ${line}`);
    const says = m[4] === undefined ? undefined : new RegExp(m[4]);
    return { tool: m[1], kind: m[2], exit: Number(m[3]), says };
  };
  const verdict = field("verdict");
  assert.match(
    verdict ?? "",
    /^(runs|runs with notes|refused|runs once migrated)\b/,
    `${name}.source: verdict`,
  );
  const migrate = check(/^migrate /) as Check & { kind: "coredns" | "kube-dns" };
  const digs = lines
    .filter((l) => l.startsWith("dig: "))
    .map((l) => {
      const [n, type, want] = l.slice(5).split(" ");
      return { name: n, type, want };
    });
  return {
    file,
    name,
    verdict: verdict!,
    with: field("with"),
    validate: check(/^validate: /),
    migrate,
    digs,
    address: field("address"),
  };
}

const fixtures = readdirSync(DIR)
  .filter((f) => FIXTURE.test(f))
  .sort()
  .map(readFixture);

/** The ConfigMap among a file's YAML documents (JSON is YAML too). */
function configMap(file: string): { data?: Record<string, string> } {
  const found = parseYaml(readFileSync(join(DIR, file), "utf8"), file).find((o) => o.kind === "ConfigMap");
  assert.ok(found, `${file}: a ConfigMap`);
  return found as { data?: Record<string, string> };
}

/** Lays `f` out in `dir` as its Deployment mounts it; returns the Corefile's path. */
function layout(f: Fixture, dir: string): string {
  const base = f.with ?? f.file;
  let corefile: string;
  if (base.endsWith(".Corefile")) corefile = readFileSync(join(DIR, base), "utf8");
  else {
    const { data = {} } = configMap(base);
    corefile = data.Corefile;
    for (const [key, text] of Object.entries(data))
      if (key !== "Corefile") writeFileSync(join(dir, key), text);
  }
  if (f.with !== undefined) {
    mkdirSync(join(dir, "custom"));
    for (const [key, text] of Object.entries(configMap(f.file).data ?? {})) {
      writeFileSync(join(dir, "custom", key), text);
    }
  }
  const path = join(dir, "Corefile");
  writeFileSync(path, corefile.replaceAll("/etc/coredns/", `${dir}/`));
  return path;
}

async function clusterdns(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { timeout: 30_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    assert.equal(typeof e.code, "number", String(err));
    return { code: e.code!, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

function expect(check: Check, got: { code: number; out: string }): void {
  assert.equal(got.code, check.exit, `${check.tool} exits ${check.exit}:\n${got.out}`);
  if (check.says) assert.match(got.out, check.says, `${check.tool} says ${check.says}`);
}

test("the corpus holds at least 12 published configurations, each with its source", () => {
  assert.ok(fixtures.length >= 12, `${fixtures.length} fixtures`);
  for (const f of fixtures) {
    const source = readFileSync(join(DIR, `${f.name}.source`), "utf8");
    assert.match(
      source,
      /https:\/\/github\.com\/|repository: |source: |template: /,
      `${f.name}: where it was published`,
    );
  }
  // Where a distribution publishes a template, the corpus keeps it unrendered and rendered.
  for (const name of ["k3s", "microk8s", "kubespray-coredns", "kubespray-nodelocaldns"]) {
    const rendered = fixtures.find((f) => f.name === `${name}-rendered`);
    assert.ok(rendered, `${name}: rendered too`);
    assert.match(rendered.verdict, /^runs/);
    assert.match(fixtures.find((f) => f.name === name)!.verdict, /^refused/);
  }
});

// Each check is a process of its own: four at a time.
describe("-validate and migrate give each published configuration its verdict", { concurrency: 4 }, () => {
  for (const f of fixtures) {
    for (const check of [f.validate, f.migrate]) {
      test(`${f.file}: ${check.tool} exits ${check.exit}${check.says ? `, says ${check.says}` : ""}`, async (t) => {
        const dir = mkdtempSync(join(tmpdir(), "clusterdns-corpus-"));
        t.after(() => rmSync(dir, { recursive: true, force: true }));
        // A coredns-custom ConfigMap is read with the Corefile that imports it, laid out as mounted.
        const file = f.with === undefined ? join(DIR, f.file) : layout(f, dir);
        const args = check === f.validate ? ["-validate", "-conf", file] : ["migrate", f.migrate.kind, file];
        expect(check, await clusterdns(...args));
      });
    }
  }
});

describe("a real start-up answers for each configuration that runs", () => {
  const POD = "10.53.0.1";
  const UPSTREAM = "10.53.0.2";
  // Every upstream the runnable corpus names: resolv.conf's, MicroK8s's, the kube-dns example's and
  // Kubespray's cluster DNS (which its nodelocaldns forwards the cluster domain to).
  const UPSTREAMS = ["8.8.8.8", "8.8.4.4", "1.2.3.4", "10.233.0.3"];
  let pod: Netns;
  let upstream: Netns;
  let knot: Knot;
  let dir: string;
  let kubeconfig: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-corpus-"));
    pod = await createNetns(undefined, `nameserver ${UPSTREAM}\n`);
    upstream = await createNetns(undefined, "nameserver 127.0.0.1\n");
    await joinNetns(pod, upstream, POD, UPSTREAM);
    for (const a of UPSTREAMS) await upstream.addAddress(`${a}/32`, "veth-b");
    const route = await pod.exec("ip", ["route", "add", "default", "via", UPSTREAM]);
    assert.equal(route.code, 0, route.stderr);
    knot = await startKnot({ netns: upstream.name, address: "0.0.0.0", port: 53 });
    kubeconfig = await startApiInNetns(pod, readObjects(join(ROOT, "zones", "demo-cluster.yaml")), dir);
  });

  after(async () => {
    await knot?.stop();
    await pod?.destroy();
    await upstream?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const f of fixtures.filter((x) => x.digs.length > 0)) {
    test(`${f.file}: ${f.digs.map((d) => `${d.name} ${d.type}`).join(", ")}`, async (t) => {
      const here = mkdtempSync(join(dir, `${f.name}-`));
      let corefile: string;
      if (f.migrate.kind === "kube-dns") {
        // kube-dns runs what migrate makes of its ConfigMap.
        const migrated = await clusterdns("migrate", "kube-dns", join(DIR, f.file));
        assert.equal(migrated.code, 0, migrated.out);
        corefile = join(here, "Corefile");
        writeFileSync(corefile, migrated.out);
      } else corefile = layout(f, here);
      const text = readFileSync(corefile, "utf8");
      // A node-local address is the node's: on lo. Without a kubernetes block nothing syncs.
      if (f.address !== undefined) await pod.addAddress(`${f.address}/32`);
      const ready = /^\s*kubernetes\b/m.test(text) ? undefined : /"msg":"started"/;
      const server = await startClusterdnsInNetns(pod, corefile, { KUBECONFIG: kubeconfig }, { ready });
      t.after(async () => {
        // SIGKILL: a lameduck (OpenShift's is 20 s) only delays the next start-up here.
        const exited = new Promise((r) => server.proc.once("exit", r));
        if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill("SIGKILL");
        await exited;
      });
      const port = /^\S*:(\d+)\s*\{/m.exec(text)?.[1] ?? "53";
      for (const d of f.digs) {
        const at = `@${f.address ?? "127.0.0.1"}`;
        const r = await pod.exec("dig", [at, "-p", port, "+tries=2", "+time=3", d.name, d.type]);
        assert.equal(r.code, 0, r.stderr);
        const answer = parseDig(r.stdout);
        if (d.want === "NXDOMAIN") assert.equal(answer.status, "NXDOMAIN", `${d.name}: ${r.stdout}`);
        else {
          const rdata = answer.answer
            .filter((l) => l.split(/\s+/)[3] === d.type)
            .map((l) => l.split(/\s+/)[4]);
          assert.deepEqual(rdata, [d.want], `${d.name} ${d.type}:\n${r.stdout}`);
        }
      }
    });
  }
});
