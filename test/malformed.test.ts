// Thousands of malformed packets: the server must never crash, never answer a response (QR=1) or a
// runt, never send more than a plain 512-byte UDP client may take, and must still answer afterwards.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import net from "node:net";
import { startServer, ROOT, type RunningServer } from "./helpers/server.ts";
import { UDP_ENGINES, engineArgs } from "./helpers/engines.ts";
import { dig } from "./helpers/dig.ts";
import { rng } from "./helpers/rng.ts";
import { halfOpenExchange } from "./helpers/half-open.ts";
import { mutate } from "./helpers/fuzz-packets.ts";
import { tcpFrame } from "../src/dns/tcp-frames.ts";

function validQuery(name: string, type: number): Buffer {
  const parts = name.split(".").filter(Boolean);
  const q = Buffer.alloc(12 + parts.reduce((n, l) => n + l.length + 1, 1) + 4);
  q.writeUInt16BE(0x0100, 2);
  q.writeUInt16BE(1, 4);
  let o = 12;
  for (const l of parts) {
    q[o++] = l.length;
    o += q.write(l, o, "latin1");
  }
  q[o++] = 0;
  q.writeUInt16BE(type, o);
  q.writeUInt16BE(1, o + 2);
  return q;
}

/** Packet i of the shared fuzz corpus, with ID i (to match replies to packets) and ARCOUNT 0 (no OPT,
 * so every reply must fit 512 octets). */
function malformed(r: () => number, i: number): Buffer {
  const p = mutate(r, i);
  if (p.length >= 12) {
    p.writeUInt16BE(i, 0);
    p.writeUInt16BE(0, 10);
  }
  return p;
}

/** Each engine's replies to the malformed packets, by ID, as hex. */
const answered = new Map<string, Map<number, string>>();
let clientPort = 0;

for (const engine of UDP_ENGINES) {
  describe(`UDP engine ${engine}`, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startServer(
        `example.org {\n    file ${ROOT}/zones/example.org.zone\n}\n. {\n    whoami\n}\n`,
        {
          args: engineArgs(engine),
        },
      );
    });
    after(async () => {
      assert.equal(await srv.stop(), 0);
    });

    test("5,000 malformed UDP packets: no crash, no reflection, no reply over 512 bytes", async () => {
      const r = rng(20261122);
      const sent = new Map<number, Buffer>();
      const sock = dgram.createSocket("udp4");
      const replies: Buffer[] = [];
      sock.on("message", (m) => replies.push(m));
      // The same client port for every engine: whoami's replies carry it, and they are compared below.
      await new Promise<void>((res) => sock.bind(clientPort, "127.0.0.1", () => res()));
      clientPort = sock.address().port;
      for (let i = 0; i < 5000; i++) {
        const p = malformed(r, i);
        if (p.length >= 12) sent.set(i, p);
        sock.send(p, srv.port, "127.0.0.1");
        if (i % 100 === 99) await new Promise((res) => setTimeout(res, 5));
      }
      await new Promise((res) => setTimeout(res, 500));
      sock.close();
      assert.ok(replies.length > 100, `got ${replies.length} replies`);
      for (const m of replies) {
        assert.ok(m.length >= 12 && m.length <= 512, `reply of ${m.length} bytes`);
        assert.equal(m[2] & 0x80, 0x80, "replies have QR set");
        const q = sent.get(m.readUInt16BE(0));
        assert.ok(q, "every reply matches a query we sent that was at least 12 bytes long");
        assert.equal(q[2] & 0x80, 0, "a packet with QR=1 is never answered");
      }
      answered.set(engine, new Map(replies.map((m) => [m.readUInt16BE(0), m.toString("hex")])));
      assert.equal(srv.proc.exitCode, null, "still running");
      const after = await dig(srv.port, "www.example.org", "A");
      assert.equal(after.status, "NOERROR");
    });

    test("garbage over TCP: connections are closed or answered, the server keeps serving", async () => {
      const r = rng(7);
      const connections = Array.from({ length: 20 }, (_, c) => {
        const frames: Buffer[] = [];
        for (let i = 0; i < 20; i++) {
          const p = malformed(r, c * 20 + i);
          const len = Buffer.alloc(2);
          len.writeUInt16BE(r() < 0.1 ? Math.floor(r() * 65536) : p.length);
          frames.push(len, p);
        }
        return Buffer.concat(frames);
      });
      await Promise.all(
        connections.map(
          (bytes) =>
            new Promise<void>((res) => {
              const s = net.connect(srv.port, "127.0.0.1");
              s.on("error", () => res());
              s.on("close", () => res());
              s.end(bytes);
              setTimeout(() => s.destroy(), 300);
            }),
        ),
      );
      assert.equal(srv.proc.exitCode, null);
      const ok = await dig(srv.port, "example.org", "SOA", "+tcp");
      assert.equal(ok.status, "NOERROR");
    });

    test("TCP: a zero-length message ends the connection; the queries before it are answered", async () => {
      const query = validQuery("www.example.org", 1);
      // Two queries, then a zero length, then one more that must not be read.
      const bytes = Buffer.concat([tcpFrame(query), tcpFrame(query), Buffer.from([0, 0]), tcpFrame(query)]);
      // Sent in 3-octet pieces: the framing must not depend on how the stream is cut. The client keeps its
      // own side open: the server must drop the connection whole, not only half-close it.
      const { received, end } = await halfOpenExchange(srv.port, { send: bytes, piece: 3, waitMs: 2000 });
      assert.equal(end, "dropped", "dropped by the server");
      let replies = 0;
      for (let at = 0; at + 2 <= received.length; at += 2 + received.readUInt16BE(at)) replies++;
      assert.equal(replies, 2);
    });
  });
}

test("the UDP engines answer the malformed packets alike, byte for byte", (t) => {
  if (answered.size < 2) return t.skip("one UDP engine here");
  const [first, second] = [...answered.values()];
  // A reply lost on the way (loopback under load) is not a difference: compare what both got.
  const both = [...first.keys()].filter((id) => second.has(id));
  assert.ok(both.length > 100, `${both.length} packets answered by both`);
  for (const id of both) assert.equal(second.get(id), first.get(id), `reply to packet ${id}`);
});
