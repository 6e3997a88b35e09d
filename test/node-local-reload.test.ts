// Node-local mode across a reload that fails: the ConfigMap changes `nodelocal` (here its check
// interval) together with something that cannot start (a block on a port another process holds). The
// reload is rejected and the running instance serves on, so the node must keep its interface and rules
// and go on checking them. In a network namespace made here; needs root, iproute2 and nftables.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { startClusterdnsInNetns, waitForLine, type NetnsServer } from "./helpers/netns-cluster.ts";
import { parseDig } from "./helpers/dig.ts";

const LINK_LOCAL = "169.254.20.10";

function corefile(check: string, extra = ""): string {
  return `.:53 {
    bind ${LINK_LOCAL}
    nodelocal {
        rules nftables
        check ${check}
    }
    reload 2s 1s
    chaos node-local
}
${extra}`;
}

let ns: Netns;
let dir: string;
let server: NetnsServer | undefined;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "clusterdns-nodelocal-reload-"));
  ns = await createNetns(undefined, "nameserver 127.0.0.1\n");
});

after(async () => {
  await server?.stop();
  await ns?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

test("a rejected reload that changed nodelocal leaves the node set up, still checked", async () => {
  const conf = join(dir, "Corefile");
  writeFileSync(conf, corefile("1s"));
  server = await startClusterdnsInNetns(ns, conf, {}, { ready: /NOTRACK rules ready/ });
  // Port 9999 of the node-local address, held by another process: the new block cannot listen.
  const holder = ns.spawn(process.execPath, [
    "-e",
    `const net = require("node:net"), dgram = require("node:dgram");
net.createServer().listen(9999, "${LINK_LOCAL}", () =>
  dgram.createSocket("udp4").bind(9999, "${LINK_LOCAL}", () => console.log("bound")));`,
  ]);
  await waitForLine(holder, /^bound$/, "the holder of port 9999");
  writeFileSync(conf, corefile("2s", `.:9999 {\n    bind ${LINK_LOCAL}\n    chaos other\n}\n`));
  await waitForLine(server.proc, /the new Corefile was rejected/, "the reload", [], 15_000);
  holder.kill();

  const link = await ns.exec("ip", ["-br", "addr", "show", "dev", "nodelocaldns"]);
  assert.match(link.stdout, new RegExp(`${LINK_LOCAL}/32`), `the interface: ${link.stdout}${link.stderr}`);
  assert.equal((await ns.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"])).code, 0);
  const d = await ns.exec("dig", [`@${LINK_LOCAL}`, "version.bind", "TXT", "CH", "+tries=1", "+time=2"]);
  assert.equal(parseDig(d.stdout).status, "NOERROR", d.stdout + d.stderr);

  // The checks go on: a table someone removes is put back.
  assert.equal((await ns.exec("nft", ["delete", "table", "inet", "clusterdns_nodelocal"])).code, 0);
  await waitForLine(server.proc, /put back/, "the periodic check", [], 15_000);

  await server.stop();
  assert.equal(server.proc.exitCode, 0);
  assert.notEqual((await ns.exec("ip", ["link", "show", "dev", "nodelocaldns"])).code, 0);
  assert.notEqual((await ns.exec("nft", ["list", "table", "inet", "clusterdns_nodelocal"])).code, 0);
});
