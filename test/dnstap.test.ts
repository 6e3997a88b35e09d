// dnstap against a real receiver: Debian's golang-dnstap command (`dnstap -u SOCKET` / `-l ADDR`, with
// -j for one JSON object per message) decodes what clusterdns sends over a unix socket and over TCP,
// and a receiver that goes away and comes back does not hurt answering.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startServer, type RunningServer } from "./helpers/server.ts";
import { makePki, startTlsFront } from "./upstream/tls-front.ts";
import { dig } from "./helpers/dig.ts";
import { freePort, freeUdpTcpPort } from "./helpers/free-port.ts";
import { serveTable } from "./helpers/recording-dns-server.ts";
import { startLoad } from "./helpers/load.ts";
import { Type } from "../src/dns/constants.ts";
import { VERSION } from "../src/version.ts";

const run = promisify(execFile);

/** One dnstap message as `dnstap -j` prints it. */
interface Tapped {
  type: string;
  identity?: string;
  version?: string;
  message: {
    type: string;
    socket_family?: string;
    socket_protocol?: string;
    query_address?: string;
    response_address?: string;
    query_port?: number;
    response_port?: number;
    query_time?: string;
    response_time?: string;
    query_message?: string;
    response_message?: string;
  };
}

interface Receiver {
  got: Tapped[];
  /** Waits until `pick` finds at least `n` messages (10 s at most), and returns them. */
  until(pick: (t: Tapped) => boolean, n?: number): Promise<Tapped[]>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Sends it a signal (SIGSTOP: it hangs, reading nothing). */
  signal(signal: NodeJS.Signals): void;
}

/** Starts `dnstap ARGS -j` and waits until it listens. */
async function startReceiver(args: string[]): Promise<Receiver> {
  const child: ChildProcess = spawn("dnstap", [...args, "-j"], { stdio: ["ignore", "pipe", "pipe"] });
  const got: Tapped[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => got.push(JSON.parse(line) as Tapped));
  let stderr = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  // It says when its unix socket is open; on TCP it says nothing until a writer connects: ss shows it.
  const tcpPort = args[0] === "-l" ? args[1].split(":").at(-1) : undefined;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) assert.fail(`dnstap exited (${child.exitCode}): ${stderr}`);
    if (tcpPort === undefined ? /opened input socket/.test(stderr) : await listening(tcpPort)) break;
    if (i >= 200) assert.fail(`dnstap did not listen: ${stderr}`);
    await sleep(50);
  }
  return {
    got,
    async until(pick, n = 1) {
      for (let i = 0; i < 200; i++) {
        const found = got.filter(pick);
        if (found.length >= n) return found;
        await sleep(50);
      }
      assert.fail(`dnstap receiver: ${got.filter(pick).length} of ${n} messages; got ${JSON.stringify(got)}`);
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    signal: (signal) => child.kill(signal),
  };
}

async function listening(port: string): Promise<boolean> {
  const { stdout } = await run("ss", ["-Hltn", `sport = :${port}`]);
  return stdout.trim() !== "";
}

const asks = (t: Tapped, name: string) => (t.message.query_message ?? "").includes(`;${name}\tIN\t A`);
const ofType = (type: string, protocol?: string) => (t: Tapped) =>
  t.message.type === type && (protocol === undefined || t.message.socket_protocol === protocol);

test("dnstap over a unix socket, full: client and forwarder messages, decoded by the real receiver", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-dnstap-"));
  const socket = join(dir, "tap.sock");
  const upstream = await serveTable(
    { "up.example.net.": { A: ["192.0.2.99"] }, "silent.example.net.": { drop: ["*"] } },
    "127.0.0.1",
    0,
    () => {},
  );
  const receiver = await startReceiver(["-u", socket]);
  // A second dnstap line of the block has a receiver of its own, and sends only what it is asked to.
  const onlyForwarded = await startReceiver(["-u", join(dir, "forwarded.sock")]);
  const server = await startServer(`. {
    dnstap unix://${socket} full {
      identity test-identity
      version test-version
    }
    dnstap ${join(dir, "forwarded.sock")} {
      message_types FORWARDER_RESPONSE
    }
    file ${join(ROOT, "zones", "example.org.zone")} example.org
    forward . 127.0.0.1:${upstream.port}
  }`);
  try {
    const clientPort = await freeUdpTcpPort();
    assert.deepEqual(
      (await dig(server.port, "www.example.org", "A", `-b`, `127.0.0.1#${clientPort}`)).answer,
      ["www.example.org. 3600 IN A 192.0.2.10"],
    );
    await dig(server.port, "www.example.org", "A", "+tcp");
    assert.equal((await dig(server.port, "up.example.net", "A")).answer.length, 1);

    const [cq] = await receiver.until(
      (t) => ofType("CLIENT_QUERY", "UDP")(t) && t.message.query_port === clientPort,
    );
    assert.equal(cq.type, "MESSAGE");
    assert.equal(cq.identity, "test-identity");
    assert.equal(cq.version, "test-version");
    assert.equal(cq.message.socket_family, "INET");
    assert.equal(cq.message.query_address, "127.0.0.1");
    assert.equal(cq.message.response_port, server.port);
    assert.ok(asks(cq, "www.example.org."), `the query's wire message: ${cq.message.query_message}`);
    assert.ok(cq.message.query_time);

    const [cr] = await receiver.until(
      (t) => ofType("CLIENT_RESPONSE", "UDP")(t) && t.message.query_port === clientPort,
    );
    assert.match(cr.message.response_message ?? "", /www\.example\.org\.\t3600\tIN\tA\t192\.0\.2\.10/);
    assert.ok(Date.parse(cr.message.response_time!) >= Date.parse(cr.message.query_time!) - 1);

    const [tcp] = await receiver.until((t) => ofType("CLIENT_RESPONSE", "TCP")(t));
    assert.equal(tcp.message.response_address, "127.0.0.1");
    assert.match(tcp.message.response_message ?? "", /192\.0\.2\.10/);

    const [fq] = await receiver.until((t) => ofType("FORWARDER_QUERY")(t));
    assert.equal(fq.message.socket_protocol, "UDP");
    assert.equal(fq.message.response_address, "127.0.0.1");
    assert.equal(fq.message.response_port, upstream.port);
    assert.equal(fq.message.query_address, "127.0.0.1", "the client's address, as CoreDNS reports it");
    assert.ok(asks(fq, "up.example.net."), `the forwarded query: ${fq.message.query_message}`);
    const [fr] = await receiver.until((t) => ofType("FORWARDER_RESPONSE")(t));
    assert.match(fr.message.response_message ?? "", /up\.example\.net\.\t30\tIN\tA\t192\.0\.2\.99/);
    await receiver.until(
      (t) => ofType("CLIENT_RESPONSE")(t) && (t.message.response_message ?? "").includes("192.0.2.99"),
    );
    // A try that gets no reply: its query is sent, and no response.
    void dig(server.port, "silent.example.net", "A").catch(() => {});
    await receiver.until((t) => ofType("FORWARDER_QUERY")(t) && asks(t, "silent.example.net."));
    assert.ok(
      !receiver.got.some(
        (t) => ofType("FORWARDER_RESPONSE")(t) && (t.message.response_message ?? "").includes("silent"),
      ),
    );

    const [only] = await onlyForwarded.until(ofType("FORWARDER_RESPONSE"));
    assert.equal(only.message.response_port, upstream.port);
    assert.equal(only.message.response_message, undefined, "without full");
    assert.deepEqual(new Set(onlyForwarded.got.map((t) => t.message.type)), new Set(["FORWARDER_RESPONSE"]));
  } finally {
    await server.stop();
    await receiver.stop();
    await onlyForwarded.stop();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("dnstap over TCP: defaults without full; a receiver absent, killed and restarted never hurts answering", async () => {
  const port = await freePort();
  const server = await startServer(`example.org {
    dnstap tcp://127.0.0.1:${port}
    file ${join(ROOT, "zones", "example.org.zone")}
  }`);
  let receiver: Receiver | undefined;
  try {
    // No receiver yet: answering goes on.
    assert.equal((await dig(server.port, "www.example.org")).answer.length, 1);
    receiver = await startReceiver(["-l", `127.0.0.1:${port}`]);
    const first = await askUntilTapped(server.port, receiver, "ns1.example.org.");
    assert.equal(first.identity, hostname());
    assert.equal(first.version, `clusterdns-${VERSION}`);
    assert.equal(first.message.query_message, undefined, "no wire message without full");
    assert.equal(first.message.socket_protocol, "UDP");
    assert.equal(first.message.query_address, "127.0.0.1");

    // The receiver dies under load: every query is still answered, and the next receiver hears again.
    const load = startLoad(server.port, "www.example.org.", Type.A, { intervalMs: 2, maxQueries: 600 });
    await sleep(200);
    await receiver.stop("SIGKILL");
    await sleep(600);
    receiver = await startReceiver(["-l", `127.0.0.1:${port}`]);
    const r = await load.stop();
    assert.deepEqual(r.failures, []);
    assert.ok(r.answered > 100, `answered ${r.answered}`);
    await askUntilTapped(server.port, receiver, "ns2.example.org.");
    assert.ok(
      server.logs.some((l) => l.plugin === "dnstap" && /lost the receiver/.test(String(l.msg))),
      "the loss is logged",
    );
  } finally {
    await server.stop();
    await receiver?.stop();
  }
});

/** Asks `name` (as a CLIENT_QUERY the tap can report without full) until the receiver got one for it,
 * within 15 s: the tap reconnects with backoff. Matched by the client's port of each try. */
async function askUntilTapped(port: number, receiver: Receiver, name: string): Promise<Tapped> {
  for (let i = 0; i < 60; i++) {
    const clientPort = await freeUdpTcpPort();
    await dig(port, name, "A", "-b", `127.0.0.1#${clientPort}`);
    await sleep(250);
    const t = receiver.got.find(
      (m) => m.message.type === "CLIENT_QUERY" && m.message.query_port === clientPort,
    );
    if (t !== undefined) return t;
  }
  assert.fail(`no CLIENT_QUERY for ${name} reached the receiver`);
}

test("dnstap over TLS: the receiver's certificate is verified, unless skipverify", async () => {
  const port = await freePort();
  const receiver = await startReceiver(["-l", `127.0.0.1:${port}`]);
  const pki = makePki();
  const front = await startTlsFront(pki, port);
  const corefile = (block: string) => `example.org {
    dnstap tls://127.0.0.1:${front.port} ${block}
    file ${join(ROOT, "zones", "example.org.zone")}
  }`;
  const servers: RunningServer[] = [];
  try {
    const unverified = await startServer(corefile(""));
    servers.push(unverified);
    assert.equal((await dig(unverified.port, "www.example.org")).answer.length, 1);
    await waitForLog(unverified, /cannot reach the receiver/);
    assert.equal(receiver.got.length, 0, "nothing goes to a receiver whose certificate does not verify");

    const skipping = await startServer(corefile("{\n skipverify\n }"));
    servers.push(skipping);
    await askUntilTapped(skipping.port, receiver, "ns1.example.org.");

    const trusting = await startServer(corefile(""), { env: { NODE_EXTRA_CA_CERTS: pki.ca } });
    servers.push(trusting);
    await askUntilTapped(trusting.port, receiver, "ns2.example.org.");
  } finally {
    for (const s of servers) await s.stop();
    await front.close();
    await receiver.stop();
    rmSync(pki.dir, { recursive: true, force: true });
  }
});

async function waitForLog(server: RunningServer, re: RegExp): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (server.logs.some((l) => re.test(String(l.msg)))) return;
    await sleep(50);
  }
  assert.fail(`no log line like ${re}: ${JSON.stringify(server.logs)}`);
}

test("after a reload the new configuration sends, on a connection of its own", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-dnstap-"));
  const socket = join(dir, "tap.sock");
  const receiver = await startReceiver(["-u", socket]);
  const corefile = (identity: string) => `example.org {
    dnstap ${socket} {
      identity ${identity}
    }
    file ${join(ROOT, "zones", "example.org.zone")}
  }`;
  const server = await startServer(corefile("before-reload"));
  try {
    assert.equal((await askUntilTapped(server.port, receiver, "ns1.example.org.")).identity, "before-reload");
    writeFileSync(join(server.dir, "Corefile"), corefile("after-reload"));
    server.proc.kill("SIGUSR1");
    await waitForLog(server, /^reloaded$/);
    assert.equal((await askUntilTapped(server.port, receiver, "ns2.example.org.")).identity, "after-reload");
    assert.ok(server.logs.filter((l) => l.msg === "dnstap: connected to the receiver").length >= 2);
  } finally {
    await server.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a receiver that hangs (reads nothing for 4 s) is let go, as by CoreDNS's write timeout, and the next one hears", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-dnstap-"));
  const socket = join(dir, "tap.sock");
  const big = Array.from({ length: 60 }, (_, i) => `big 300 IN TXT "${"x".repeat(200)}${i}"`).join("\n");
  const zone = `$ORIGIN example.org.\n@ 300 IN SOA ns hostmaster 1 7200 3600 1209600 60\nwww 300 IN A 192.0.2.7\n${big}\n`;
  const hung = await startReceiver(["-u", socket]);
  let next: Receiver | undefined;
  const server = await startServer(
    `example.org {\n    dnstap unix://${socket} full\n    file db.example\n}\n`,
    { files: { "db.example": zone } },
  );
  try {
    await askUntilTapped(server.port, hung, "www.example.org.");
    // Idle past the timeout first: the check must hold on a connection that was idle.
    await sleep(4500);
    hung.signal("SIGSTOP");
    // A new receiver takes the socket's path (a restarted sidecar, the hung one not yet gone).
    next = await startReceiver(["-u", socket]);
    // 40 replies of 13 KB, each in a CLIENT_RESPONSE (full): more than the socket holds.
    for (let i = 0; i < 40; i++) await dig(server.port, "big.example.org", "TXT", "+tcp");
    await askUntilTapped(server.port, next, "www.example.org.");
    assert.ok(server.logs.some((l) => l.plugin === "dnstap" && /lost the receiver/.test(String(l.msg))));
  } finally {
    await server.stop();
    await hung.stop("SIGKILL");
    await next?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
