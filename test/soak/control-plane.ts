// Soak part "control-plane": bad Corefiles, zone files, objects files, kubeconfigs and listen
// addresses (test/soak/bad-configs.ts), three ways:
// - at start-up: clusterdns exits 1 with exactly one line on stderr, "clusterdns: " and what is wrong
//   (file:line where there is one; "cannot listen" for a socket), never a stack trace;
// - as a reload under a steady UDP load: each one is rejected with one log line saying the same, the
//   running configuration keeps answering (no query of the load fails), and a good edit afterwards
//   still takes effect;
// - mutated: Corefiles made from kubeadm's, the demo's and the cases above by cutting, repeating,
//   swapping and changing their lines and words are set up in this process (no sockets): each either
//   sets up or fails with a coded error (ConfigError, ...), never a TypeError or another uncoded one.
//   Zone files and objects files are mutated the same way through their parsers.
//   node test/soak/control-plane.ts [--reduced]

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { BAD_CONFIGS, type BadConfig } from "./bad-configs.ts";
import { mutateLines } from "./mutate-text.ts";
import { startServer, ROOT } from "../helpers/server.ts";
import { holdUdpTcpPort } from "../helpers/free-port.ts";
import { startLoad } from "../helpers/load.ts";
import { rng } from "../helpers/rng.ts";
import { parseCorefile } from "../../src/corefile/parser.ts";
import { Instance } from "../../src/server/instance.ts";
import { plugins } from "../../src/plugins/index.ts";
import { NOT_SUPPORTED } from "../../src/plugins/not-supported.ts";
import { DEFAULT_COREFILE } from "../../src/default-corefile.ts";
import { parseZone } from "../../src/plugins/file/zone-parser.ts";
import { loadObjects } from "../../src/plugins/kubernetes/api/objects-file.ts";
import { Type } from "../../src/dns/constants.ts";

const BIN = join(ROOT, "bin", "clusterdns");

/** A port held for TCP and UDP on 127.0.0.1 while `fn` runs (the `PORT` of a case). */
async function withPortInUse<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const held = await holdUdpTcpPort();
  try {
    return await fn(held.port);
  } finally {
    await held.release();
  }
}

/** Writes a case's files into `dir`; returns its Corefile text. */
function writeCase(c: BadConfig, dir: string, port: number): string {
  const sub = (s: string) => s.replaceAll("DIR", dir).replaceAll("PORT", String(port));
  for (const [name, text] of Object.entries(c.files ?? {}))
    writeFileSync(join(dir, name), typeof text === "string" ? sub(text) : text);
  return sub(c.corefile);
}

const says = (c: BadConfig, dir: string, port: number) =>
  new RegExp(c.says.source.replaceAll("PORT", String(port)).replaceAll("DIR", dir), c.says.flags);

/** What is wrong with how clusterdns refused a case at start-up, or undefined when it was right. */
async function startupCase(c: BadConfig, port: number): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-soak-"));
  try {
    writeFileSync(join(dir, "Corefile"), writeCase(c, dir, port));
    const proc = spawn(process.execPath, [BIN, "-conf", join(dir, "Corefile"), "-dns.port", "0"], {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((r) => proc.once("exit", (x) => r(x)));
    clearTimeout(timer);
    const lines = stderr.trimEnd().split("\n");
    if (code !== 1) return `exit ${code}, not 1: ${stderr.trim().slice(0, 200)}`;
    if (lines.length !== 1) return `${lines.length} lines on stderr: ${stderr.slice(0, 300)}`;
    if (!lines[0].startsWith("clusterdns: ")) return `not "clusterdns: ...": ${lines[0]}`;
    if (!says(c, dir, port).test(lines[0])) return `does not say ${c.says}: ${lines[0]}`;
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const GOOD = (address: string) => `example.org {
    hosts {
        ${address} a.example.org
        reload 0
    }
}
`;

/** Every case as a reload of a running server under load: rejected with one line, nothing fails. */
async function reloadCases(report: Report, cases: BadConfig[], log: (l: string) => void): Promise<void> {
  const srv = await startServer(GOOD("192.0.2.1"));
  const file = join(srv.dir, "Corefile");
  const load = startLoad(srv.port, "a.example.org.", Type.A, { intervalMs: 2, maxQueries: 200_000 });
  const wrong: string[] = [];
  try {
    for (const c of cases) {
      await withPortInUse(async (port) => {
        const before = srv.logs.length;
        writeFileSync(file, `${writeCase(c, srv.dir, port)}# ${c.what}\n`);
        srv.proc.kill("SIGUSR1");
        // The reload's outcome: the line after the one that announces SIGUSR1.
        const outcome = (l: Record<string, unknown>) =>
          typeof l.msg === "string" && l.msg.startsWith("reload:") && !l.msg.startsWith("reload: SIGUSR1");
        let line: Record<string, unknown> | undefined;
        for (let i = 0; i < 300 && line === undefined; i++) {
          await sleep(20);
          line = srv.logs.slice(before).find(outcome);
        }
        const error = String(line?.error ?? "");
        if (line === undefined) wrong.push(`${c.what}: no reload line`);
        else if (line.msg !== "reload: the new Corefile was rejected; the running configuration stays")
          wrong.push(`${c.what}: ${String(line.msg)}`);
        else if (error.includes("\n") || "stack" in line || "err" in line)
          wrong.push(`${c.what}: more than one line: ${JSON.stringify(line).slice(0, 300)}`);
        else if (!says(c, srv.dir, port).test(error))
          wrong.push(`${c.what}: does not say ${c.says}: ${error}`);
        // The old configuration answers on between two reloads.
        await sleep(100);
      });
    }
    // A good edit after all of them still takes effect.
    writeFileSync(file, GOOD("192.0.2.2"));
    srv.proc.kill("SIGUSR1");
    let applied = false;
    for (let i = 0; i < 300 && !applied; i++) {
      await sleep(20);
      const rr = load.last()?.answer[0];
      applied = rr !== undefined && "address" in rr.data && rr.data.address === "192.0.2.2";
    }
    report.check("a good edit after them all takes effect", applied ? "yes" : "no", applied, "yes");
  } finally {
    const r = await load.stop();
    report.check(
      "queries of the steady load answered during the reloads",
      `${r.answered} of ${r.sent}`,
      r.sent > 0 && r.failures.length === 0,
      "100%",
    );
    const code = await srv.stop();
    report.check("server exit after them all", String(code), code === 0, "0");
  }
  log(`${cases.length} broken reloads`);
  report.check(
    "broken Corefiles rejected on reload with one clear line",
    `${cases.length - wrong.length} of ${cases.length}`,
    wrong.length === 0,
    "all",
  );
  for (const w of wrong.slice(0, 10)) report.note("reload: wrong", w);
}

/** An error a bad input may end in: one of ours, with a code; anything else is a bug. */
const coded = (err: unknown) =>
  typeof (err as { code?: unknown }).code === "string" && /^[A-Z]+_ERR_/.test((err as { code: string }).code);

/** Sets up mutated Corefiles in this process; returns the uncoded errors. */
async function mutatedCorefiles(
  n: number,
  seed: number,
  dir: string,
): Promise<{ setUp: number; refused: number; bugs: string[] }> {
  const r = rng(seed);
  const bases = [
    readFileSync(join(ROOT, "Corefile.example"), "utf8").replace("/etc/resolv.conf", "127.0.0.1:1"),
    DEFAULT_COREFILE,
    ...BAD_CONFIGS.filter((c) => !c.portInUse).map((c) => writeCase(c, dir, 1)),
  ];
  const log = pino({ level: "silent" });
  const out = { setUp: 0, refused: 0, bugs: [] as string[] };
  for (let i = 0; i < n; i++) {
    const text = mutateLines(r, bases[i % bases.length]);
    let inst: Instance | undefined;
    try {
      inst = await Instance.create({
        blocks: parseCorefile(text, join(dir, "Corefile")),
        plugins,
        notSupported: NOT_SUPPORTED,
        root: ROOT,
        defaultPort: 0,
        log,
      });
      out.setUp++;
    } catch (err) {
      out.refused++;
      if (!coded(err) && out.bugs.length < 10) out.bugs.push(`${String(err)} from:\n${text}`);
    } finally {
      await inst?.stop();
    }
  }
  return out;
}

/** Parses mutated zone files and objects files; returns the uncoded errors. */
function mutatedData(n: number, seed: number, dir: string): { tried: number; bugs: string[] } {
  const r = rng(seed);
  const zone = readFileSync(join(ROOT, "zones", "example.org.zone"), "utf8");
  const objects = readFileSync(join(ROOT, "zones", "demo-cluster.yaml"), "utf8");
  const bugs: string[] = [];
  for (let i = 0; i < n; i++) {
    const z = mutateLines(r, zone);
    try {
      parseZone(z, { origin: "example.org.", file: "db" });
    } catch (err) {
      if (!coded(err) && bugs.length < 10) bugs.push(`zone: ${String(err)} from:\n${z.slice(0, 2000)}`);
    }
    const o = mutateLines(r, objects);
    const path = join(dir, "objects.yaml");
    writeFileSync(path, o);
    try {
      loadObjects([path]);
    } catch (err) {
      if (!coded(err) && bugs.length < 10) bugs.push(`objects: ${String(err)}`);
    }
  }
  return { tried: 2 * n, bugs };
}

/** The target: no bad input ends in an error without a code; the first few that did, shown. */
function noUncoded(report: Report, what: string, bugs: string[]): void {
  report.check(`${what} failing without a coded error`, bugs.length, bugs.length === 0, "0");
  for (const b of bugs.slice(0, 3)) report.note(`${what}: uncoded error`, b.slice(0, 600));
}

export const controlPlane: SoakPart = {
  name: "control-plane",
  what: "bad Corefiles, zone files, objects files, kubeconfigs and ports: at start-up, on reload under load, mutated",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("control-plane");
    const wrong: string[] = [];
    for (const c of BAD_CONFIGS) {
      const w = await withPortInUse((port) => startupCase(c, port));
      if (w !== undefined) wrong.push(`${c.what}: ${w}`);
    }
    report.check(
      "bad inputs refused at start-up with one clear line, no stack trace",
      `${BAD_CONFIGS.length - wrong.length} of ${BAD_CONFIGS.length}`,
      wrong.length === 0,
      "all",
    );
    for (const w of wrong) report.note("start-up: wrong", w);

    await reloadCases(report, BAD_CONFIGS, o.log);

    const dir = mkdtempSync(join(tmpdir(), "clusterdns-soak-"));
    try {
      const n = o.reduced ? 200 : 5000;
      const cf = await mutatedCorefiles(n, 31, dir);
      report.note("mutated Corefiles set up / refused", `${cf.setUp} / ${cf.refused}`);
      noUncoded(report, "mutated Corefiles", cf.bugs);
      const data = mutatedData(n, 32, dir);
      report.note("mutated zone and objects files parsed", data.tried);
      noUncoded(report, "mutated zone and objects files", data.bugs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return report;
  },
};

if (import.meta.main) await runAlone(controlPlane);
