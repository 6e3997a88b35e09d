// Both UDP engines' listeners on real sockets, with a pipeline stand-in that answers some queries at
// once and some through a promise, as the answer cache and the plugin chain do.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { SocketAddress } from "node:net";
import { Worker } from "node:worker_threads";
import { pino } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import type { UdpListener } from "./udp.ts";
import { chooseUdpEngine, dgramEngine, UdpEngineError } from "./udp-engine.ts";
import { ipv6Text } from "./udp-batched.ts";
import { UDP_ENGINES } from "../../test/helpers/engines.ts";
import { rng } from "../../test/helpers/rng.ts";

const log = pino({ level: "silent" });

/** Answers with the query, QR set and the peer's text appended: at once for even first bytes, after a
 * timer for odd ones; a first byte of 0xff is dropped. */
function echo(peers: Peer[] = []): Pipeline {
  const handle = (buf: Buffer, peer: Peer) => {
    peers.push(peer);
    if (buf[0] === 0xff) return undefined;
    const out = Buffer.concat([buf, Buffer.from(`|${peer.remoteAddress}|${peer.remotePort}`)]);
    out[2] |= 0x80;
    if (buf[0] % 2 === 0) return out;
    return new Promise<Buffer>((r) => setTimeout(() => r(out), 5));
  };
  return {
    handle,
    // The batched engine's way in: the query in place, the reply written into its send buffer.
    handleInto(buf: Buffer, length: number, peer: Peer, into: Buffer, at: number) {
      const out = handle(Buffer.from(buf.subarray(0, length)), { ...peer });
      if (out === undefined) return 0;
      if (out instanceof Promise) return out;
      return out.copy(into, at);
    },
  } as unknown as Pipeline;
}

async function client(host: string): Promise<dgram.Socket> {
  const sock = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
  await new Promise<void>((r) => sock.bind(0, host, r));
  return sock;
}

/** Sends `packets` in waves of 100 (a wave is more than one batch of 64) and collects the replies
 * until `want` came or 3 s passed. */
async function exchange(
  sock: dgram.Socket,
  port: number,
  host: string,
  packets: Buffer[],
  want = packets.length,
): Promise<Buffer[]> {
  const got: Buffer[] = [];
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3000);
    sock.on("message", (m) => {
      got.push(m);
      if (got.length === want) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  for (let i = 0; i < packets.length; i++) {
    sock.send(packets[i], port, host);
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 20));
  }
  await done;
  sock.removeAllListeners("message");
  return got;
}

const packet = (first: number, n: number) =>
  Buffer.from([first, 0, 0, 0, n >> 8, n & 0xff, 0, 0, 0, 0, 0, 0]);

for (const name of UDP_ENGINES) {
  const engine = name === "dgram" ? dgramEngine : chooseUdpEngine("batched");
  const listener = (p: Pipeline, { address = "127.0.0.1", reusePort = false } = {}): UdpListener =>
    engine.listener(p, { address, port: 0, reusePort }, log);

  describe(`UDP engine ${name}`, () => {
    test("binds port 0 and says which; answers at once and through promises; drops what it is told to", async () => {
      const peers: Peer[] = [];
      const l = listener(echo(peers));
      const port = await l.bind("127.0.0.1", 0);
      assert.ok(port > 0);
      const sock = await client("127.0.0.1");
      try {
        // 300 queries: odd ones answered later; every fifth one dropped.
        const packets = Array.from({ length: 300 }, (_, i) => packet(i % 5 === 4 ? 0xff : i % 2, i));
        const got = await exchange(sock, port, "127.0.0.1", packets, 240);
        const ids = got.map((m) => m.readUInt16BE(4)).sort((a, b) => a - b);
        assert.deepEqual(
          ids,
          packets.map((_, i) => i).filter((i) => i % 5 !== 4),
        );
        const me = sock.address();
        for (const m of got) assert.ok(m.toString("latin1").endsWith(`|127.0.0.1|${me.port}`));
        assert.deepEqual(
          { ...peers[0] },
          {
            proto: "udp",
            remoteAddress: "127.0.0.1",
            remotePort: me.port,
            localAddress: "127.0.0.1",
            localPort: port,
          },
        );
      } finally {
        sock.close();
        await l.close();
      }
    });

    test("IPv6: the peer's address as dgram spells it, replies go back to it", async () => {
      const peers: Peer[] = [];
      const l = listener(echo(peers), { address: "::1" });
      const port = await l.bind("::1", 0);
      const sock = await client("::1");
      try {
        const got = await exchange(sock, port, "::1", [packet(0, 1), packet(1, 2)]);
        assert.equal(got.length, 2);
        assert.equal(peers[0].remoteAddress, "::1");
        assert.equal(peers[0].localAddress, "::1");
        assert.equal(peers[0].remotePort, sock.address().port);
      } finally {
        sock.close();
        await l.close();
      }
    });

    test("a port in use is EADDRINUSE; close() lets go of the port; use() switches pipelines", async () => {
      const taken = await client("127.0.0.1");
      const busy = listener(echo());
      await assert.rejects(busy.bind("127.0.0.1", taken.address().port), { code: "EADDRINUSE" });
      taken.close();
      await busy.close();

      const l = listener(echo());
      const port = await l.bind("127.0.0.1", 0);
      const later: Peer[] = [];
      l.use(echo(later));
      const sock = await client("127.0.0.1");
      assert.equal((await exchange(sock, port, "127.0.0.1", [packet(0, 7)])).length, 1);
      assert.equal(later.length, 1, "the new pipeline answered");
      await l.close();
      await l.close();
      // Only an exclusive bind proves the socket is gone.
      const again = dgram.createSocket("udp4");
      await new Promise<void>((resolve, reject) => {
        again.once("error", reject);
        again.bind({ port, address: "127.0.0.1", exclusive: true }, resolve);
      });
      again.close();
      sock.close();
    });

    test("reusePort: two listeners share a port, and both are answered", async () => {
      const a = listener(echo(), { reusePort: true });
      const port = await a.bind("127.0.0.1", 0);
      const b = listener(echo(), { reusePort: true });
      assert.equal(await b.bind("127.0.0.1", port), port);
      const sock = await client("127.0.0.1");
      try {
        assert.equal((await exchange(sock, port, "127.0.0.1", [packet(0, 1)])).length, 1);
      } finally {
        sock.close();
        await a.close();
        await b.close();
      }
    });
  });
}

test("batched: a worker thread ended with its socket open and polled closes it, and the process goes on", async (t) => {
  if (!UDP_ENGINES.includes("batched")) return t.skip("no batched engine here");
  // The addon's environment clean-up hook closes the socket, else the worker's loop could not close.
  const code = `
    import { BatchedListener, loadAddon } from ${JSON.stringify(new URL("./udp-batched.ts", import.meta.url).href)};
    import { parentPort } from "node:worker_threads";
    const l = new BatchedListener(loadAddon(), { handle: (b) => b }, { address: "127.0.0.1", port: 0, reusePort: false }, console);
    parentPort.postMessage(await l.bind("127.0.0.1", 0));
  `;
  const w = new Worker(code, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
  assert.equal(await w.terminate(), 1);
  const again = dgram.createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    again.once("error", reject);
    again.bind({ port, address: "127.0.0.1", exclusive: true }, resolve);
  });
  again.close();
});

test("-udp.engine: dgram is always there, batched only where its addon loads; the default falls back", () => {
  assert.equal(chooseUdpEngine("dgram").name, "dgram");
  const missing = () => new Error("the batched UDP engine is not built (no such file)");
  assert.throws(() => chooseUdpEngine("batched", missing), UdpEngineError);
  const fallback = chooseUdpEngine(undefined, missing);
  assert.deepEqual([fallback.name, fallback.fallback], ["dgram", missing().message]);
  if (process.platform === "linux") assert.equal(chooseUdpEngine().name, "batched", "built by npm ci");
});

test("IPv6 addresses read as libuv writes them (Node's SocketAddress is the oracle)", () => {
  const fixed = [
    "::",
    "::1",
    "fe80::1",
    "2001:db8:0:0:1:0:0:1",
    "::ffff:1.2.3.4",
    "::1.2.3.4",
    "::ffff:0:1.2.3.4",
    "1::",
    "1:0:0:1:0:0:0:1",
    "0:0:0:0:0:0:0:102",
    "fd00:10:96::a",
  ];
  const r = rng(20);
  const random = Array.from({ length: 500 }, () =>
    // Mostly zero words, so runs of zeros of every length and place come up.
    Array.from({ length: 8 }, () => (r() < 0.5 ? 0 : Math.floor(r() * 65536)).toString(16)).join(":"),
  );
  for (const address of [...fixed, ...random]) {
    const bytes = Buffer.alloc(16);
    const words = new SocketAddress({ address, family: "ipv6" }).address;
    const expanded = expand(words);
    for (let i = 0; i < 8; i++) bytes.writeUInt16BE(expanded[i], 2 * i);
    assert.equal(ipv6Text(bytes, 0, 0), words, address);
  }
});

/** The 8 words of an IPv6 address in any spelling. */
function expand(text: string): number[] {
  let t = text;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(t);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    t = t.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = t.split("::");
  const h = head ? head.split(":") : [];
  const tl = tail === undefined ? [] : tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array(8 - h.length - tl.length).fill("0");
  return [...h, ...zeros, ...tl].map((w) => parseInt(w, 16));
}
