import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseBlocks } from "../corefile/parser.ts";
import { configMapData } from "./input.ts";
import { printReport, reportCorefile, type ReportLine } from "./coredns.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const report = (text: string) => reportCorefile(parseBlocks(text, "Corefile"));
/** "LINE VERDICT" for each line that is not the same. */
const notSame = (lines: ReportLine[]) =>
  lines.filter((l) => l.verdict !== "same").map((l) => `${l.line} ${l.verdict}`);

describe("migrate coredns", () => {
  it("kubeadm's Corefile: everything the same but loop and loadbalance, which say how they differ", () => {
    const lines = report(readFileSync(join(ROOT, "Corefile.example"), "utf8"));
    const differs = lines.filter((l) => l.verdict !== "same");
    assert.deepEqual(
      differs.map((l) => l.text),
      ["loop", "loadbalance"],
    );
    assert.match(differs[0].note!, /at start-up only/);
    assert.match(differs[1].note!, /answer cache/);
    // One line per key line, directive and option: 4 + 14 lines of the file hold something.
    assert.equal(lines.length, 18);
    const printed = printReport(lines);
    assert.equal(printed.status, 1);
    assert.match(
      printed.text,
      /clusterdns runs this Corefile: of its 18 lines, 16 served the same, 2 differently/,
    );
  });

  it("each thing clusterdns does not serve is missing at its line, with why", () => {
    const text = [
      "tls://.:853 {", // 1
      "    whoami", // 2
      "}", // 3
      ".:53 {", // 4
      "    dnstap /tmp/dnstap.sock full", // 5
      '    log . "{remote} {/kubernetes/client-namespace}"', // 6
      "    header {", // 7
      "        response set rd", // 8
      "    }", // 9
      "    kubernetes cluster.local {", // 10
      "        resyncperiod 30s", // 11
      "        pods insecure", // 12
      "    }", // 13
      "    forward . https://dns.quad9.net/dns-query", // 14
      "    k8s_gateway example.com", // 15
      "}", // 16
    ].join("\n");
    const lines = report(text);
    assert.deepEqual(notSame(lines), [
      "1 missing",
      "5 missing",
      "6 missing",
      "8 differs",
      "11 missing",
      "14 missing",
      "15 missing",
    ]);
    const note = (line: number) => lines.find((l) => l.line === line)!.note;
    assert.match(note(1)!, /tls:\/\/ is not supported/);
    assert.equal(note(5), "no dnstap output");
    assert.match(note(6)!, /metadata placeholders/);
    assert.match(note(8)!, /rd and cd always echo the query's/);
    assert.match(note(11)!, /^`resyncperiod`: removed from CoreDNS/);
    assert.match(note(14)!, /`dns:\/\/` and `tls:\/\/` upstreams only/);
    assert.match(note(15)!, /neither a plugin of CoreDNS .* nor of clusterdns/);
    const printed = printReport(lines);
    assert.equal(printed.status, 1);
    assert.match(
      printed.text,
      /clusterdns would not start on this Corefile: of its 12 lines, 6 not served \(missing\), 1 served differently/,
    );
  });

  it("a plugin clusterdns does not have takes its block's lines with it", () => {
    const lines = report(". {\n    etcd skydns.local {\n        endpoint http://localhost:2379\n    }\n}\n");
    assert.deepEqual(notSame(lines), ["2 missing", "3 missing"]);
  });

  it("a Corefile served the same exits 0", () => {
    const printed = printReport(
      report("example.org {\n    file db.example.org\n}\n.:1053 {\n    whoami\n    cache 30\n}\n"),
    );
    // file differs (no DNSSEC): only whoami and cache here are the same.
    assert.equal(printed.status, 1);
    const same = printReport(
      report(".:1053 {\n    errors\n    whoami\n    cache 30 {\n        success 1000\n    }\n}\n"),
    );
    assert.equal(same.status, 0);
    assert.match(same.text, /clusterdns serves all 5 lines of this Corefile as CoreDNS does\.\n$/);
  });

  it("in a ConfigMap, a | block keeps the file's line numbers", () => {
    const name = join(ROOT, "deploy", "base", "configmap.yaml");
    const text = readFileSync(name, "utf8");
    const cm = configMapData({ name, text })!;
    const { firstLine, literal } = cm.placed("Corefile");
    assert.equal(literal, true);
    const lines = reportCorefile(parseBlocks("\n".repeat(firstLine - 1) + cm.data.get("Corefile")!, name));
    const loop = lines.find((l) => l.text === "loop")!;
    assert.equal(text.split("\n")[loop.line - 1].trim(), "loop");
  });

  it("prints FILE:LINE, the verdict, the line as written, and the note below it", () => {
    const { text } = printReport(report(". {\n    loop\n    dnstap /x full\n}\n"));
    const out = text.split("\n");
    assert.equal(out[0], "Corefile:1  same     . {");
    assert.equal(out[1], "Corefile:2  differs      loop");
    assert.equal(out[2], "                           probes at start-up only, not after a reload");
    assert.equal(out[3], "Corefile:3  missing      dnstap /x full");
  });
});
