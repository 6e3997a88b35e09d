import { describe, it, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readInput } from "../corefile/configmap.ts";
import { layOut } from "../corefile/layout.ts";
import { checkCoreDns, printReport, type ReportLine } from "./coredns.ts";

const ROOT = join(import.meta.dirname, "..", "..");

/** The report of `text`, written as Corefile in a fresh folder beside `files`. */
async function report(
  t: TestContext,
  text: string,
  files: Record<string, string> = {},
): Promise<ReportLine[]> {
  const dir = mkdtempSync(join(tmpdir(), "migrate-coredns-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, body] of Object.entries({ Corefile: text, ...files }))
    writeFileSync(join(dir, name), body);
  const checked = await checkCoreDns(layOut([readInput(join(dir, "Corefile"))]));
  assert.ok("lines" in checked, JSON.stringify(checked));
  return checked.lines.map((l) => ({ ...l, file: l.file.replace(dir, "DIR") }));
}

/** "LINE VERDICT" for each line that is not the same. */
const notSame = (lines: ReportLine[]) =>
  lines.filter((l) => l.verdict !== "same").map((l) => `${l.line} ${l.verdict}`);

describe("migrate coredns", () => {
  it("kubeadm's Corefile runs: exit 0, and the lines that differ say in one sentence how", async (t) => {
    const lines = await report(t, readFileSync(join(ROOT, "Corefile.example"), "utf8"));
    const differs = lines.filter((l) => l.verdict !== "same");
    assert.deepEqual(
      differs.map((l) => l.text),
      [
        "kubernetes cluster.local in-addr.arpa ip6.arpa {",
        "forward . /etc/resolv.conf {",
        "cache 30 {",
        "loop",
        "loadbalance",
      ],
    );
    assert.match(differs[0].note!, /an ANY question is answered with the name's address and SRV records/);
    assert.equal(
      differs[3].note,
      "it probes once at start-up, so a loop that a reload brings in goes unnoticed",
    );
    assert.equal(
      differs[4].note,
      "a cached reply may be replayed in the same order for up to 1 s before it is rotated again",
    );
    for (const l of differs) assert.doesNotMatch(l.note!, /README/);
    // One line per key line, directive and option: 4 + 14 lines of the file hold something.
    assert.equal(lines.length, 18);
    const printed = printReport(lines);
    assert.equal(printed.status, 0);
    assert.match(
      printed.text,
      /clusterdns runs this Corefile: of its 18 lines, 13 served the same, 5 differently/,
    );
    assert.equal(printReport(lines, { strict: true }).status, 1, "--strict: any difference fails");
  });

  it("each line that does not run is missing at its line, with the line -validate prints", async (t) => {
    const text = [
      "quic://.:853 {", // 1
      "    whoami", // 2
      "}", // 3
      ".:53 {", // 4
      "    route53 example.org.:Z1D633PJN98FT9", // 5
      "    pprof", // 6
      "    header {", // 7
      "        response set rd", // 8
      "    }", // 9
      "    kubernetes cluster.local {", // 10
      "        resyncperiod 30s", // 11
      "        pods insecure", // 12
      "    }", // 13
      "    forward . https://dns.quad9.net/dns-query", // 14
      "    k8s_gateway example.com", // 15
      "    proxy . 192.0.2.1", // 16
      "}", // 17
    ].join("\n");
    const lines = await report(t, text);
    assert.deepEqual(notSame(lines), [
      "1 missing",
      "5 missing",
      "6 missing",
      "8 differs",
      "10 differs",
      "11 missing",
      "14 missing",
      "15 missing",
      "16 missing",
    ]);
    const note = (line: number) => lines.find((l) => l.line === line)!.note;
    assert.match(note(1)!, /DNS over QUIC is not served/);
    assert.match(
      note(5)!,
      /^plugin route53 of CoreDNS is not supported by clusterdns: no cloud DNS backends/,
    );
    assert.match(note(6)!, /Go's profiler/);
    assert.match(note(8)!, /rd and cd always echo the query's/);
    assert.match(
      note(11)!,
      /'resyncperiod' is not supported: deprecated in CoreDNS 1\.5\.0, removed in 1\.7\.0/,
    );
    assert.match(note(14)!, /https/);
    assert.equal(note(15), "Unknown directive 'k8s_gateway'");
    assert.match(note(16)!, /^plugin proxy was removed from CoreDNS in 1\.5\.0: use forward/);
    assert.match(
      lines.find((l) => l.line === 16)!.error!,
      /\/Corefile:16 - Error during parsing: plugin proxy/,
    );
    const printed = printReport(lines);
    assert.equal(printed.status, 1);
    assert.match(
      printed.text,
      /clusterdns would not start on this Corefile: of its 13 lines, 7 not served \(missing\), 2 served differently/,
    );
  });

  it("a plugin clusterdns does not have takes its block's lines with it", async (t) => {
    const lines = await report(t, ". {\n    nomad {\n        address unix:///var/run/nomad.sock\n    }\n}\n");
    assert.deepEqual(notSame(lines), ["2 missing", "3 missing"]);
    assert.equal(lines[2].error, undefined, "the option goes with its plugin");
  });

  it("an import that matches no file would lose what is mounted there: exit 1", async (t) => {
    const lines = await report(
      t,
      ". {\n    whoami\n    import custom/*.override\n}\nimport custom/*.server\n",
    );
    assert.deepEqual(notSame(lines), ["3 lost", "5 lost"]);
    assert.equal(lines[2].text, "import custom/*.override");
    assert.match(
      lines[2].note!,
      /^No files matching import glob pattern: custom\/\*\.override: what is mounted there/,
    );
    const printed = printReport(lines);
    assert.equal(printed.status, 1);
    assert.match(
      printed.text,
      /But 2 imports match no file: what the distribution mounts there would be lost/,
    );
  });

  it("a Corefile that runs the same or differently exits 0; --strict fails a difference", async (t) => {
    const zone = readFileSync(join(ROOT, "zones", "example.org.zone"), "utf8");
    const file = await report(t, "example.org {\n    file db.example.org\n}\n.:1053 {\n    whoami\n}\n", {
      "db.example.org": zone,
    });
    assert.deepEqual(notSame(file), ["2 differs"]);
    assert.equal(printReport(file).status, 0);
    assert.equal(printReport(file, { strict: true }).status, 1);
    const same = printReport(
      await report(t, ".:1053 {\n    errors\n    whoami\n    log {\n        class denial\n    }\n}\n"),
    );
    assert.equal(same.status, 0);
    assert.match(same.text, /clusterdns serves all 5 lines of this Corefile as CoreDNS does\.\n$/);
  });

  it("in a ConfigMap, a | block keeps the file's line numbers", async () => {
    const name = join(ROOT, "deploy", "base", "configmap.yaml");
    const text = readFileSync(name, "utf8");
    const source = layOut([readInput(name)]);
    try {
      const checked = await checkCoreDns(source);
      assert.ok("lines" in checked);
      const loop = checked.lines.find((l) => l.text === "loop")!;
      assert.equal(loop.file, name);
      assert.equal(text.split("\n")[loop.line - 1].trim(), "loop");
    } finally {
      source.close();
    }
  });

  it("prints FILE:LINE, the verdict, the line as written, and the note below it", async (t) => {
    const { text } = printReport(await report(t, ". {\n    loop\n    route53 example.org.:Z1\n}\n"));
    const out = text.split("\n");
    assert.equal(out[0], "DIR/Corefile:1  same     . {");
    assert.equal(out[1], "DIR/Corefile:2  differs      loop");
    assert.equal(
      out[2],
      "                               it probes once at start-up, so a loop that a reload brings in goes unnoticed",
    );
    assert.equal(out[3], "DIR/Corefile:3  missing      route53 example.org.:Z1");
  });
});
