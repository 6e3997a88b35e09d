// Node-local mode in network namespaces made here: a "node" runs clusterdns with `nodelocal`, which
// puts 169.254.20.10 and the kube-dns Service IP on an interface of its own and writes the NOTRACK
// rules; a "pod" whose resolv.conf names the link-local address resolves through it with glibc
// (getent) and dig. The node also has a kube-proxy-like DNAT of the Service IP to a "kube-dns pod", so
// the NOTRACK rules are seen to work (the Service IP is answered on the node while they are there) and
// to be gone after exit (the Service IP reaches kube-dns again). Needs root, iproute2 and nftables or
// iptables: without them it fails, it does not skip.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addInterface,
  createNodeAndPod,
  kubeProxyDnat,
  NODE_IP,
  type NodeAndPod,
} from "./helpers/netns-node.ts";
import { startClusterdnsInNetns, waitForLine, type NetnsServer } from "./helpers/netns-cluster.ts";
import { ROOT } from "./helpers/server.ts";
import { parseDig } from "./helpers/dig.ts";
import type { Netns } from "./helpers/netns.ts";

const LINK_LOCAL = "169.254.20.10";
const KUBE_DNS = "10.96.0.10";
const POD_RESOLV = `nameserver ${LINK_LOCAL}\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:1 attempts:1\n`;
const DEMO = join(ROOT, "zones", "demo-cluster.yaml");

/** A Corefile serving the demo cluster on the node-local addresses. */
function nodeLocalCorefile(nodelocal: string, bind = `${LINK_LOCAL} ${KUBE_DNS}`): string {
  return `.:53 {
    bind ${bind}
    ${nodelocal}
    chaos node-local
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects ${DEMO}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
`;
}

/** dig inside a namespace: `dig @SERVER NAME TYPE OPTS`, parsed. */
async function digIn(ns: Netns, server: string, name: string, type = "A", ...opts: string[]) {
  const r = await ns.exec("dig", [`@${server}`, name, type, "+tries=1", "+time=2", ...opts]);
  return { ...parseDig(r.stdout), code: r.code, raw: r.stdout + r.stderr };
}

async function nft(ns: Netns, ...args: string[]) {
  return ns.exec("nft", args);
}

describe("node-local: a pod resolves through the node's link-local address", () => {
  let env: NodeAndPod;
  let dir: string;
  let central: NetnsServer | undefined;
  let local: NetnsServer | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-nodelocal-"));
    env = await createNodeAndPod(POD_RESOLV);
    // The "kube-dns pod" and kube-proxy's DNAT of the Service IP to it, as kube-proxy's nftables mode
    // writes it (a table named kube-proxy, which nodelocal's detection also reads).
    const centralConf = join(dir, "Central");
    writeFileSync(centralConf, `.:5353 {\n    bind ${NODE_IP}\n    chaos kube-dns\n}\n`);
    central = await startClusterdnsInNetns(env.node, centralConf, {}, { ready: /"msg":"started"/ });
    await kubeProxyDnat(env.node, KUBE_DNS, `${NODE_IP}:5353`);
    const conf = join(dir, "Corefile");
    writeFileSync(conf, nodeLocalCorefile("nodelocal {\n        check 1s\n    }"));
    local = await startClusterdnsInNetns(env.node, conf, {}, { ready: /NOTRACK rules ready/ });
  });

  after(async () => {
    await local?.stop();
    await central?.stop();
    await env?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the interface holds both addresses and the NOTRACK rules are in nftables (kube-proxy's)", async () => {
    const link = await env.node.exec("ip", ["-br", "addr", "show", "dev", "nodelocaldns"]);
    assert.equal(link.code, 0, link.stderr);
    assert.match(link.stdout, new RegExp(`${LINK_LOCAL}/32`));
    assert.match(link.stdout, new RegExp(`${KUBE_DNS}/32`));
    const table = await nft(env.node, "list", "table", "inet", "clusterdns_nodelocal");
    assert.equal(table.code, 0, table.stderr);
    for (const addr of [LINK_LOCAL, KUBE_DNS]) {
      for (const proto of ["udp", "tcp"]) {
        assert.match(table.stdout, new RegExp(`ip daddr ${addr} ${proto} dport 53 notrack`));
        assert.match(table.stdout, new RegExp(`ip saddr ${addr} ${proto} sport 53 notrack`));
      }
    }
    const detected = local!.logs.find((l) => l.msg === "firewall detected");
    assert.equal(detected?.why, "kube-proxy runs in nftables mode");
  });

  test("getent and dig in the pod resolve a Service through 169.254.20.10", async () => {
    const getent = await env.pod.exec("getent", ["ahosts", "nginx"]);
    assert.equal(getent.code, 0, getent.stderr);
    assert.match(getent.stdout, /^10\.102\.97\.154\s/m);
    const d = await digIn(env.pod, LINK_LOCAL, "nginx.default.svc.cluster.local");
    assert.equal(d.status, "NOERROR", d.raw);
    assert.deepEqual(
      d.answer.map((l) => l.split(/\s+/).pop()),
      ["10.102.97.154"],
    );
    const tcp = await digIn(env.pod, LINK_LOCAL, "nginx.default.svc.cluster.local", "A", "+tcp");
    assert.equal(tcp.status, "NOERROR", tcp.raw);
  });

  test("transparent: the kube-dns Service IP is answered on the node, not DNATed to kube-dns", async () => {
    const d = await digIn(env.pod, KUBE_DNS, "version.bind", "TXT", "-c", "CH");
    assert.equal(d.status, "NOERROR", d.raw);
    assert.match(d.answer.join("\n"), /"node-local"/);
  });

  test("a check puts back rules someone removed", async () => {
    const del = await nft(env.node, "delete", "table", "inet", "clusterdns_nodelocal");
    assert.equal(del.code, 0, del.stderr);
    await waitForLine(local!.proc, /put back/, "the periodic check", [], 15_000);
    const table = await nft(env.node, "list", "table", "inet", "clusterdns_nodelocal");
    assert.equal(table.code, 0, table.stderr);
  });

  test("after exit the interface and rules are gone, and the Service IP reaches kube-dns again", async () => {
    await local!.stop();
    assert.equal(local!.proc.exitCode, 0);
    const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
    assert.notEqual(link.code, 0, "the interface is still there");
    const table = await nft(env.node, "list", "table", "inet", "clusterdns_nodelocal");
    assert.notEqual(table.code, 0, "the rules are still there");
    const d = await digIn(env.pod, KUBE_DNS, "version.bind", "TXT", "-c", "CH");
    assert.equal(d.status, "NOERROR", d.raw);
    assert.match(d.answer.join("\n"), /"kube-dns"/);
  });
});

describe("node-local: iptables, and what refuses to start", () => {
  let env: NodeAndPod;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-nodelocal-"));
    env = await createNodeAndPod(POD_RESOLV);
  });

  after(async () => {
    await env?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  test("iptables-legacy: NOTRACK and ACCEPT rules carry clusterdns's comment, and go at exit", async () => {
    const conf = join(dir, "Iptables");
    writeFileSync(conf, nodeLocalCorefile("nodelocal {\n        rules iptables-legacy\n    }", LINK_LOCAL));
    const server = await startClusterdnsInNetns(env.node, conf, {}, { ready: /NOTRACK rules ready/ });
    try {
      const raw = await env.node.exec("iptables-legacy-save", ["-t", "raw"]);
      const ours = raw.stdout.split("\n").filter((l) => l.includes("clusterdns-nodelocal"));
      assert.equal(ours.length, 6, raw.stdout);
      assert.ok(
        ours.some((l) => /-A PREROUTING -d 169\.254\.20\.10\/32 -p udp .*--dport 53 .*-j NOTRACK/.test(l)),
      );
      const filter = await env.node.exec("iptables-legacy-save", ["-t", "filter"]);
      assert.equal(
        filter.stdout.split("\n").filter((l) => /clusterdns-nodelocal.*-j ACCEPT/.test(l)).length,
        4,
      );
      const d = await digIn(env.pod, LINK_LOCAL, "nginx.default.svc.cluster.local");
      assert.equal(d.status, "NOERROR", d.raw);
    } finally {
      await server.stop();
    }
    const left = await env.node.exec("iptables-legacy-save", []);
    assert.doesNotMatch(left.stdout, /clusterdns-nodelocal/);
    assert.notEqual((await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"])).code, 0);
  });

  test("an IPv6 bind address spelled uncompressed: checks find it there, and a restart after a crash starts", async () => {
    // ip and ip6tables print fd00::a; the Corefile says FD00:0:0::A. Before, every check tried to add
    // the address again ("already assigned"), and a start after a crash stopped on it.
    const conf = join(dir, "Ipv6");
    const corefile = nodeLocalCorefile(
      "nodelocal {\n        rules iptables-legacy\n        check 1s\n    }",
      `${LINK_LOCAL} FD00:0:0::A`,
    );
    writeFileSync(conf, corefile);
    const ready = { ready: /NOTRACK rules ready/ };
    const crashed = await startClusterdnsInNetns(env.node, conf, {}, ready);
    await new Promise((r) => setTimeout(r, 2500));
    const gone = new Promise((r) => crashed.proc.once("exit", r));
    crashed.proc.kill("SIGKILL");
    await gone;
    const complaints = crashed.logs.filter((l) => /failed|put back/.test(String(l.msg)));
    assert.deepEqual(complaints, []);
    const server = await startClusterdnsInNetns(env.node, conf, {}, ready);
    try {
      const d = await digIn(env.node, "fd00::a", "nginx.default.svc.cluster.local");
      assert.equal(d.status, "NOERROR", d.raw);
      const saved = await env.node.exec("ip6tables-legacy-save", ["-t", "raw"]);
      assert.equal(saved.stdout.split("\n").filter((l) => l.includes("-d fd00::a/128")).length, 4);
    } finally {
      await server.stop();
    }
    assert.equal(server.proc.exitCode, 0);
    assert.doesNotMatch((await env.node.exec("ip6tables-legacy-save", [])).stdout, /clusterdns-nodelocal/);
    assert.notEqual((await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"])).code, 0);
  });

  test("a successor writing another firewall takes over, and no rule of ours is left in the first", async () => {
    // `auto` can pick differently from one start to the next (before kube-proxy has written its rules,
    // after a node's reboot, it picks nftables), and `rules` may change in a rollout. Before, the new
    // pod took the old one for "another DNS server" and stopped, and after a crash the old firewall's
    // rules stayed on the node for good.
    const corefile = (rules: string) =>
      nodeLocalCorefile(`nodelocal {\n        rules ${rules}\n    }`, LINK_LOCAL);
    const ready = { flags: ["-reuseport"], ready: /NOTRACK rules ready/ };
    const confs = ["nftables", "iptables-legacy"].map((rules) => {
      const conf = join(dir, `Firewall-${rules}`);
      writeFileSync(conf, corefile(rules));
      return conf;
    });
    const old = await startClusterdnsInNetns(env.node, confs[0], {}, ready);
    const successor = await startClusterdnsInNetns(env.node, confs[1], {}, ready);
    await old.stop();
    const d = await digIn(env.pod, LINK_LOCAL, "nginx.default.svc.cluster.local");
    assert.equal(d.status, "NOERROR", d.raw);
    const gone = new Promise((r) => successor.proc.once("exit", r));
    successor.proc.kill("SIGKILL");
    await gone;
    const restarted = await startClusterdnsInNetns(env.node, confs[0], {}, ready);
    const legacy = await env.node.exec("iptables-legacy-save", []);
    assert.doesNotMatch(legacy.stdout, /clusterdns-nodelocal/, "the crashed process's rules are still there");
    await restarted.stop();
    assert.notEqual((await nft(env.node, "list", "table", "inet", "clusterdns_nodelocal")).code, 0);
    assert.notEqual((await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"])).code, 0);
  });

  test("rules iptables: a restart after a crash keeps the rules where they are, none swept and rewritten", async () => {
    // Plain iptables is one of the two backends (iptables -V says which): the other firewalls are
    // swept of rules of ours, never the one it writes to.
    const conf = join(dir, "PlainIptables");
    writeFileSync(conf, nodeLocalCorefile("nodelocal {\n        rules iptables\n    }", LINK_LOCAL));
    const ready = { ready: /NOTRACK rules ready/ };
    const crashed = await startClusterdnsInNetns(env.node, conf, {}, ready);
    const gone = new Promise((r) => crashed.proc.once("exit", r));
    crashed.proc.kill("SIGKILL");
    await gone;
    const restarted = await startClusterdnsInNetns(env.node, conf, {}, ready);
    await restarted.stop();
    assert.deepEqual(
      restarted.logs.filter((l) => /another firewall/.test(String(l.msg))),
      [],
      "its own rules taken for another firewall's",
    );
    assert.equal(restarted.logs.find((l) => l.msg === "NOTRACK rules ready")?.changes, 0);
    assert.doesNotMatch((await env.node.exec("iptables-save", [])).stdout, /clusterdns-nodelocal/);
  });

  test("node-local-dns on the address: one line naming it, exit 1, the node left as it was", async () => {
    // node-local-dns's set-up: its interface, its NOTRACK rule (no comment) and a server on :53.
    await addInterface(env.node, "nodelocaldns", `${LINK_LOCAL}/32`);
    const rule = [
      "-t",
      "raw",
      "-A",
      "PREROUTING",
      "-d",
      `${LINK_LOCAL}/32`,
      "-p",
      "udp",
      "--dport",
      "53",
      "-j",
      "NOTRACK",
    ];
    assert.equal((await env.node.exec("iptables-nft", rule)).code, 0);
    const holder = env.node.spawn(process.execPath, [
      "-e",
      `require("node:dgram").createSocket("udp4").bind(53, "${LINK_LOCAL}", () => console.log("bound"))`,
    ]);
    await waitForLine(holder, /^bound$/, "the stand-in for node-local-dns");
    try {
      const conf = join(dir, "Refused");
      writeFileSync(conf, nodeLocalCorefile("nodelocal", LINK_LOCAL));
      const r = await env.node.exec(process.execPath, [join(ROOT, "bin", "clusterdns"), "-conf", conf], {
        timeoutMs: 30_000,
      });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0],
        /^clusterdns: .*Refused:3 - nodelocal: 169\.254\.20\.10 is already served on this node by node-local-dns \(NodeLocal DNSCache; its rule iptables-nft: -A PREROUTING -d 169\.254\.20\.10\/32 .*NOTRACK\): remove it first \(kubectl -n kube-system delete daemonset node-local-dns\), or bind other addresses$/,
      );
      assert.equal((await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"])).code, 0);
    } finally {
      holder.kill();
      await env.node.exec("ip", ["link", "del", "nodelocaldns"]);
      await env.node.exec("iptables-nft", ["-t", "raw", "-F", "PREROUTING"]);
    }
  });

  test("rules that cannot be written: one line, exit 1, and the interface made for them is gone", async () => {
    // An image without iptables (PATH holds ip and nft only). Before, the exit left nodelocaldns with
    // its addresses on the node, and a restart loop kept it there.
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["ip", "nft"]) {
      const found = await env.node.exec("sh", ["-c", `command -v ${tool}`]);
      symlinkSync(found.stdout.trim(), join(bin, tool));
    }
    const conf = join(dir, "NoIptables");
    writeFileSync(conf, nodeLocalCorefile("nodelocal {\n        rules iptables\n    }", LINK_LOCAL));
    const r = await env.node.exec(process.execPath, [join(ROOT, "bin", "clusterdns"), "-conf", conf], {
      env: { PATH: bin },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^clusterdns: .*NoIptables:3 - nodelocal: iptables .*command not found.*\n$/);
    const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
    assert.notEqual(link.code, 0, `the interface is still there: ${link.stdout}`);
  });

  test("port 53 held on every address of the node: one line, exit 1, and the interface is gone", async () => {
    // dnsmasq or another server on 0.0.0.0:53: not on the node-local addresses themselves, so the
    // start goes on until the listeners cannot open. Before, the exit left the interface behind.
    const holder = env.node.spawn(process.execPath, [
      "-e",
      `const net = require("node:net"), dgram = require("node:dgram");
net.createServer().listen(53, "0.0.0.0", () =>
  dgram.createSocket("udp4").bind(53, "0.0.0.0", () => console.log("bound")));`,
    ]);
    await waitForLine(holder, /^bound$/, "the server on 0.0.0.0:53");
    try {
      const conf = join(dir, "PortHeld");
      writeFileSync(conf, nodeLocalCorefile("nodelocal {\n        rules nftables\n    }", LINK_LOCAL));
      const r = await env.node.exec(process.execPath, [join(ROOT, "bin", "clusterdns"), "-conf", conf], {
        timeoutMs: 30_000,
      });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /^clusterdns: cannot listen on port 53 .*the address is in use.*\n$/);
      const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
      assert.notEqual(link.code, 0, `the interface is still there: ${link.stdout}`);
    } finally {
      holder.kill();
    }
  });

  test("a SIGTERM while waiting for the first sync exits at once, and the interface is gone", async () => {
    // A pod deleted while the API does not answer. Before, it exited leaving the interface behind.
    const conf = join(dir, "Waiting");
    writeFileSync(
      conf,
      `.:53 {\n    bind ${LINK_LOCAL}\n    nodelocal {\n        rules nftables\n    }\n    kubernetes cluster.local {\n        endpoint http://127.0.0.1:1\n        startup_timeout 1h\n    }\n}\n`,
    );
    const proc = env.node.spawn(process.execPath, [join(ROOT, "bin", "clusterdns"), "-conf", conf]);
    const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
    await waitForLine(proc, /waiting for the first sync before listening/, "the wait");
    proc.kill("SIGTERM");
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("running"), 5000))]);
    assert.equal(code, 0);
    const link = await env.node.exec("ip", ["link", "show", "dev", "nodelocaldns"]);
    assert.notEqual(link.code, 0, `the interface is still there: ${link.stdout}`);
  });

  test("a set-up that fails is one line: an interface of another kind", async () => {
    const conf = join(dir, "Veth");
    writeFileSync(conf, nodeLocalCorefile("nodelocal veth-n", LINK_LOCAL));
    const r = await env.node.exec(process.execPath, [join(ROOT, "bin", "clusterdns"), "-conf", conf], {
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /^clusterdns: .*Veth:3 - nodelocal: interface veth-n exists and is a veth, not a dummy: name another one \(nodelocal INTERFACE\)\n$/,
    );
  });
});
