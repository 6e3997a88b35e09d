// clusterdns and the test API server as processes inside a network namespace (test/helpers/netns.ts),
// for tests that need port 53, a resolv.conf of their own, or the real glibc resolver. The API server
// runs in there too (test/k8s/serve.ts), since the namespace cannot reach this process's loopback.

import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseAllDocuments } from "yaml";
import type { Netns } from "./netns.ts";
import { ROOT } from "./server.ts";

/** A pod's resolv.conf in namespace `web` of cluster.local, with the node's name server at 127.0.0.1
 * (the netns's own loopback, where the test's clusterdns listens). */
export const POD_RESOLV_CONF =
  "nameserver 127.0.0.1\nsearch web.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n";

export interface NetnsServer {
  proc: ChildProcess;
  /** Every JSON log line clusterdns printed so far, parsed. */
  logs: Record<string, unknown>[];
  /** Stops clusterdns (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The objects of a YAML file of Kubernetes objects (documents or Lists), as a flat array. */
export function readObjects(file: string): object[] {
  return parseAllDocuments(readFileSync(file, "utf8")).flatMap((d) => {
    const v = d.toJS() as { items?: object[] } | null;
    return v?.items ?? (v ? [v] : []);
  });
}

/** The first line of `proc`'s output matching `re` (every line goes to `sink` too). */
export function waitForLine(
  proc: ChildProcess,
  re: RegExp,
  what: string,
  sink: string[] = [],
  timeoutMs = 20_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what}: no line matching ${re} in time:\n${sink.join("\n")}`)),
      timeoutMs,
    );
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        sink.push(line);
        if (re.test(line)) {
          clearTimeout(timer);
          resolve(line);
        }
      });
    }
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}):\n${sink.join("\n")}`));
    });
  });
}

/** Starts the test API server in `ns` with these objects; the kubeconfig is written to `dir`. Its
 * standard input is held open: it ends with this process or the namespace. */
export async function startApiInNetns(ns: Netns, objects: object[], dir: string): Promise<string> {
  writeFileSync(join(dir, "objects.json"), JSON.stringify(objects));
  const api = ns.spawn(process.execPath, [
    join(ROOT, "test", "k8s", "serve.ts"),
    join(dir, "objects.json"),
    dir,
  ]);
  await waitForLine(api, /^serving /, "the test API server");
  return join(dir, "kubeconfig");
}

/** Starts clusterdns in `ns` with a Corefile file and waits until its kubernetes plugin synced (or
 * until a line matching `ready`). */
export async function startClusterdnsInNetns(
  ns: Netns,
  corefile: string,
  env: Record<string, string> = {},
  o: { flags?: string[]; ready?: RegExp } = {},
): Promise<NetnsServer> {
  const args = [join(ROOT, "bin", "clusterdns"), "-conf", corefile, ...(o.flags ?? [])];
  const proc = ns.spawn(process.execPath, args, { env });
  const lines: string[] = [];
  const logs: Record<string, unknown>[] = [];
  await waitForLine(proc, o.ready ?? /"msg":"synced"/, "clusterdns", lines);
  const parse = (line: string) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log record
    }
  };
  lines.forEach(parse);
  for (const stream of [proc.stdout!, proc.stderr!]) createInterface({ input: stream }).on("line", parse);
  return {
    proc,
    logs,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

/** Joins `a` and `b` with a veth pair, veth-a in `a` holding `aAddress`/24 and veth-b in `b` holding
 * `bAddress`/24, both up. */
export async function joinNetns(a: Netns, b: Netns, aAddress: string, bAddress: string): Promise<void> {
  const ip = async (ns: Netns, args: string[]) => {
    const r = await ns.exec("ip", args);
    if (r.code !== 0) throw new Error(`ip ${args.join(" ")} in ${ns.name}: ${r.stderr}`);
  };
  await ip(a, ["link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b", "netns", b.name]);
  for (const [ns, dev, address] of [
    [a, "veth-a", aAddress],
    [b, "veth-b", bAddress],
  ] as const) {
    await ns.addAddress(`${address}/24`, dev);
    await ip(ns, ["link", "set", dev, "up"]);
  }
}
