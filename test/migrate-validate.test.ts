// `migrate coredns` and `-validate` never disagree on whether a line runs: over every Corefile under
// test/fixtures/ (a file named *Corefile*, or a coredns ConfigMap, with the other ConfigMaps of its
// folder beside it as the pod mounts them), the lines -validate refuses are exactly the lines migrate
// calls missing, with the same message, and the exit statuses follow.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pino } from "pino";
import { configMapData, readInput, type Input } from "../src/corefile/configmap.ts";
import { layOut } from "../src/corefile/layout.ts";
import { checkCoreDns, printReport } from "../src/migrate/coredns.ts";
import { validateCorefile } from "../src/validate.ts";
import { plugins } from "../src/plugins/index.ts";
import { NOT_SUPPORTED } from "../src/plugins/not-supported.ts";
import { ROOT } from "./helpers/server.ts";

const FIXTURES = join(ROOT, "test", "fixtures");
const KUBE_DNS_KEYS = ["stubDomains", "upstreamNameservers", "federations"];

/** Each Corefile of the fixtures, with the ConfigMaps mounted beside it. */
function corefiles(): Input[][] {
  const files = readdirSync(FIXTURES, { recursive: true, encoding: "utf8" }).map((f) => join(FIXTURES, f));
  const read = files
    .filter((f) => /\.(ya?ml|json)$/.test(f) || /corefile/i.test(basename(f)))
    .map((f) => ({
      input: readInput(f),
      cm: /\.(ya?ml|json)$/.test(f) ? configMapData(readInput(f)) : undefined,
    }))
    .filter((r) => r.cm !== undefined || /corefile/i.test(basename(r.input.name)));
  const out: Input[][] = [];
  for (const main of read) {
    if (main.cm && !main.cm.data.has("Corefile")) continue;
    const beside = main.cm
      ? read.filter(
          (r) =>
            r.cm &&
            !r.cm.data.has("Corefile") &&
            !KUBE_DNS_KEYS.some((k) => r.cm!.data.has(k)) &&
            dirname(r.input.name) === dirname(main.input.name),
        )
      : [];
    out.push([main.input, ...beside.map((r) => r.input)]);
  }
  return out;
}

const options = { plugins, notSupported: NOT_SUPPORTED, defaultPort: 53 };

test("migrate coredns and -validate agree on every line of every fixture Corefile", async () => {
  const all = corefiles();
  assert.ok(all.length >= 6, `fixtures found: ${all.map((c) => c[0].name).join(", ")}`);
  for (const inputs of all) {
    const name = inputs.map((i) => i.name.slice(FIXTURES.length + 1)).join(" + ");
    const source = layOut(inputs);
    try {
      const refused = await validateCorefile(source, options, pino({ level: "silent" }));
      const checked = await checkCoreDns(source);
      const missing =
        "errors" in checked
          ? checked.errors
          : checked.lines.filter((l) => l.error !== undefined).map((l) => l.error!);
      assert.deepEqual([...missing].sort(), [...refused].sort(), `${name}: the same lines, the same words`);
      if ("lines" in checked) {
        const { status } = printReport(checked.lines);
        const lost = checked.lines.some((l) => l.verdict === "lost");
        assert.equal(status, refused.length > 0 || lost ? 1 : 0, `${name}: exit status`);
      }
    } finally {
      source.close();
    }
  }
});

test("the fixtures get the verdicts their README gives them", async () => {
  const verdicts = async (...files: string[]) => {
    const source = layOut(files.map((f) => readInput(join(FIXTURES, "migrate", f))));
    try {
      const checked = await checkCoreDns(source);
      if ("errors" in checked) return checked.errors.map((e) => e.replace(/^.*?:(\d+) - /, "$1 "));
      return checked.lines.filter((l) => l.verdict !== "same").map((l) => `${l.line} ${l.verdict}`);
    } finally {
      source.close();
    }
  };
  const template = await verdicts("k3s-template.yaml");
  assert.equal(template.length, 1);
  assert.match(
    template[0],
    /^12 Error during parsing: '%\{CLUSTER_DOMAIN\}%' is a template placeholder \(k3s\)/,
  );
  // Rendered, with coredns-custom: NodeHosts and both imports resolve; kubernetes (ANY), hosts
  // (NXDOMAIN without fallthrough), forward (client EDNS options), cache (AA), loop and loadbalance differ.
  const k3s = ["12 differs", "16 differs", "22 differs", "23 differs", "24 differs", "26 differs"];
  assert.deepEqual(await verdicts("k3s/coredns.yaml", "k3s/coredns-custom.yaml"), [
    ...k3s,
    "3 differs",
    "4 differs",
  ]);
  // Without coredns-custom, both imports would lose what is mounted there.
  assert.deepEqual(await verdicts("k3s/coredns.yaml"), [...k3s, "27 lost", "29 lost"]);
  assert.deepEqual(await verdicts("aks/coredns.yaml", "aks/coredns-custom.yaml"), [
    "14 differs",
    "20 differs",
    "21 differs",
    "22 differs",
    "24 differs",
    "1 differs",
    "3 differs",
    "4 differs",
  ]);
  assert.deepEqual(await verdicts("kubernetes-1.11.Corefile"), [
    "4 differs",
    "6 missing",
    "9 missing",
    "10 missing",
    "13 missing",
    "14 differs",
    "15 differs",
    "17 differs",
  ]);
  const rewrite = readFileSync(join(FIXTURES, "migrate", "rewrite-answer.Corefile"), "utf8");
  assert.ok(rewrite.includes("answer name"));
  assert.deepEqual(await verdicts("rewrite-answer.Corefile"), ["7 differs", "8 differs"]);
});
