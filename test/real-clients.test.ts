// Real stub resolvers against a headless Service of 100 endpoints, whose A answer (about 1650 octets)
// does not fit a plain UDP reply. A network namespace plays a pod in "default" (a pod's resolv.conf,
// clusterdns on its 127.0.0.1:53, the cluster from an objects file):
// - glibc (`getent ahosts`) gets TC=1, asks again over TCP and must see all 100 addresses;
// - musl before 1.2.4 (Alpine 3.17 and older; Debian's musl-tools is 1.2.3) never retries over TCP and
//   uses the truncated reply as it is: it must get the partial answer that fits 512 octets, which is
//   exactly what `dig +noedns +ignore` shows. With an empty truncated answer it resolved nothing.
// The musl program is C (test/clients/musl-getaddrinfo.c), built here with `musl-gcc -static`.
// Needs root, iproute2 and musl-gcc (Debian musl-tools; ./dev test installs it).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { startClusterdnsInNetns, type NetnsServer } from "./helpers/netns-cluster.ts";
import { ROOT } from "./helpers/server.ts";
import { parseDig } from "./helpers/dig.ts";
import { MANY_ADDRESSES, writeHeadlessObjects } from "./k8s/headless.ts";

const run = promisify(execFile);

const RESOLV_CONF =
  "nameserver 127.0.0.1\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n";

/** The path of the built musl program, or why there is none. */
async function buildMusl(dir: string): Promise<{ bin?: string; why?: string }> {
  const bin = join(dir, "musl-getaddrinfo");
  try {
    await run("musl-gcc", ["-static", "-O2", "-o", bin, join(ROOT, "test", "clients", "musl-getaddrinfo.c")]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      return { why: "musl-gcc is not installed (apt-get install musl-tools): the musl client is not tested" };
    }
    throw err;
  }
  return { bin };
}

describe("stub resolvers in a pod against a headless Service of 100 endpoints", () => {
  let ns: Netns;
  let server: NetnsServer | undefined;
  let dir: string;
  let musl: { bin?: string; why?: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-clients-"));
    musl = await buildMusl(dir);
    const objects = writeHeadlessObjects(join(dir, "headless.json"));
    const corefile = join(dir, "Corefile");
    writeFileSync(
      corefile,
      `cluster.local:53 {\n    kubernetes cluster.local {\n        objects ${objects}\n    }\n}\n`,
    );
    ns = await createNetns(undefined, RESOLV_CONF);
    server = await startClusterdnsInNetns(ns, corefile);
  });

  after(async () => {
    await server?.stop();
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The addresses a lookup printed, one per line, first column. */
  const addresses = (stdout: string) =>
    stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(/\s+/)[0]);

  it("glibc: TC=1 over UDP, all 100 addresses after its retry over TCP", async () => {
    const r = await ns.exec("getent", ["ahosts", "many"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...new Set(addresses(r.stdout))].sort(), [...MANY_ADDRESSES].sort());
  });

  it("musl 1.2.3 (no TCP): the addresses that fit 512 octets, what dig +noedns shows", async (t) => {
    if (!musl.bin) {
      t.skip(musl.why);
      return;
    }
    const r = await ns.exec(musl.bin, ["many"]);
    assert.equal(r.code, 0, `musl's getaddrinfo failed: ${r.stdout}${r.stderr}`);
    const got = addresses(r.stdout);
    const d = parseDig(
      (await ns.exec("dig", ["@127.0.0.1", "many.default.svc.cluster.local", "A", "+noedns", "+ignore"]))
        .stdout,
    );
    assert.ok(d.flags.includes("tc"));
    const fitted = d.answer.map((l) => l.split(" ")[4]);
    assert.equal(fitted.length, 29, "12 header + 36 question + 29 records of 16 octets <= 512");
    assert.deepEqual([...got].sort(), [...fitted].sort());
    for (const a of got) assert.ok(MANY_ADDRESSES.includes(a), a);
  });
});
