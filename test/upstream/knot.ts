// A real upstream for forward's tests: Debian's knotd serving example.org. on 127.0.0.1, from a
// temporary folder holding its configuration and zone file. It serves another zone when given one
// (the transfer tests compare its AXFR with clusterdns's), and lets loopback clients transfer.
//
// It stops by itself: knotd runs under a small shell that waits for its stdin to close, which happens
// at stop() or whenever the test process ends, however it ends; then the shell kills knotd.

import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { writeKnotConf, type KnotConf } from "./knot-conf.ts";
import { freeUdpTcpPort } from "../helpers/free-port.ts";

export const KNOT_ZONE = "example.org.";
/** Records of big.example.org.: too many for one UDP reply of 1232 octets, so only TCP gets them. */
export const BIG_COUNT = 120;
/** Records of mid.example.org.: over 512 octets, under 1232. */
export const MID_COUNT = 40;

export interface KnotOptions {
  /** The TXT string at who.example.org., to tell two upstreams apart. */
  id?: string;
  /** Listen on this port (to start an upstream again where it was); a free one by default. */
  port?: number;
  /** Listen on this address (default 127.0.0.1). */
  address?: string;
  /** Run inside this network namespace (`ip netns exec`); give `port` too, as the free-port probe
   * looks at this process's own namespace. */
  netns?: string;
  /** Serve this zone instead of example.org. */
  zone?: { origin: string; text: string };
  /** Knot's NOTIFY, journal, control socket and TSIG key (knot-conf.ts), for secondary's tests. */
  conf?: Pick<KnotConf, "notifyPorts" | "journal" | "control" | "key" | "primary">;
}

export interface Knot {
  port: number;
  /** Lines knotd printed, for failure messages. */
  log: string[];
  /** Runs knotc on the control socket (with `conf.control`) and returns what it printed. */
  knotc(...args: string[]): Promise<string>;
  /** Stops knotd and waits until it has exited. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const execFileP = promisify(execFile);

export async function startKnot(o: KnotOptions = {}): Promise<Knot> {
  for (let attempt = 0; ; attempt++) {
    const port = o.port ?? (await freeUdpTcpPort());
    try {
      const zone = o.zone ?? { origin: KNOT_ZONE, text: zoneText(o.id ?? "knot") };
      return await launch(port, zone, o.address ?? "127.0.0.1", o.netns, o.conf);
    } catch (err) {
      // Someone took the free port before knotd bound it: pick another (not when one was asked for).
      if (o.port !== undefined || attempt >= 3) throw err;
    }
  }
}

async function launch(
  port: number,
  zone: { origin: string; text: string },
  address: string,
  netns?: string,
  extra: KnotOptions["conf"] = {},
): Promise<Knot> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-knot-"));
  const zoneFile = join(dir, "zone");
  writeFileSync(zoneFile, zone.text);
  // Transfers allowed from loopback: test/transfer.test.ts compares clusterdns's AXFR with Knot's.
  const conf = writeKnotConf({
    dir,
    address,
    port,
    zone: zone.origin,
    zoneFile,
    transferTo: ["127.0.0.0/8", "::1"],
    ...extra,
  });
  // Without knotd on PATH the shell says so and exits, rather than waiting out the start timeout.
  const script =
    'command -v knotd >/dev/null || { echo "knotd not found on PATH ($PATH): apt-get install knot" >&2; exit 127; }; ' +
    'knotd -c "$1" </dev/null & k=$!; cat >/dev/null; kill $k; wait $k';
  const sh = ["sh", "-c", script, "sh", conf];
  const [cmd, ...args] = netns === undefined ? sh : ["ip", "netns", "exec", netns, ...sh];
  const proc = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
  const log: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  // A secondary has no zone to load: it is ready once it starts to ask its primary.
  const ready =
    extra.primary === undefined ? `[${zone.origin}] loaded` : `[${zone.origin}] zone will be bootstrapped`;
  const kill = () => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error("knotd did not load its zone in time")), START_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      kill();
      cleanup();
      reject(new Error(`${err.message}\n${log.join("\n")}`));
    };
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        log.push(line);
        if (line.includes(ready)) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
    proc.once("error", fail);
    void exited.then(() => fail(new Error(`knotd exited before loading its zone (port ${port})`)));
  });

  // Neither the child nor its pipes keep the test process alive; its exit closes stdin, which ends knotd.
  proc.unref();
  for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as net.Socket).unref();

  let stopping: Promise<void> | undefined;
  return {
    port,
    log,
    async knotc(...args) {
      const { stdout } = await execFileP("knotc", ["-s", join(dir, "knot.sock"), ...args]);
      return stdout;
    },
    stop() {
      stopping ??= (async () => {
        proc.stdin!.end();
        const timer = setTimeout(kill, 5000);
        await exited;
        clearTimeout(timer);
        cleanup();
      })();
      return stopping;
    },
  };
}

function zoneText(id: string): string {
  const lines = [
    `$ORIGIN ${KNOT_ZONE}`,
    "$TTL 300",
    "@ SOA ns.example.org. hostmaster.example.org. 1 3600 600 86400 60",
    "@ NS ns",
    "ns A 127.0.0.1",
    "www A 192.0.2.1",
    "www AAAA 2001:db8::1",
    "alias CNAME www",
    `who TXT "${id}"`,
  ];
  for (let i = 0; i < BIG_COUNT; i++) lines.push(`big A 10.1.${i >> 8}.${i & 255}`);
  for (let i = 0; i < MID_COUNT; i++) lines.push(`mid A 10.2.0.${i}`);
  return lines.join("\n") + "\n";
}
