// What lets a UDP listener lose no query when it is held up or shut down: a receive buffer of 4 MiB
// (Linux's default holds 50 ms of 5,000 queries a second), and, in the batched engine, a close that
// reads and answers what the socket holds before it lets go of it, so that with SO_REUSEPORT a process
// that shuts down does not drop the queries queued for it (issue 25: 11-17 of them per rolling restart
// at 5k QPS).

import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pino } from "pino";
import type { Pipeline } from "./pipeline.ts";
import { chooseUdpEngine } from "./udp-engine.ts";
import { RECEIVE_BUFFER, literalLookup } from "./udp.ts";
import { UDP_ENGINES } from "../../test/helpers/engines.ts";

const log = pino({ level: "silent" });

/** Answers every query at once, as a cache hit is: its bytes with QR set (handleInto: the batched
 * engine's way in, the reply written into its send buffer). */
const echoAtOnce = {
  handle(buf: Buffer) {
    const out = Buffer.from(buf);
    out[2] |= 0x80;
    return out;
  },
  handleInto(buf: Buffer, length: number, _peer: unknown, into: Buffer, at: number) {
    buf.copy(into, at, 0, length);
    into[at + 2] |= 0x80;
    return length;
  },
} as unknown as Pipeline;

test(
  "the batched engine answers the datagrams queued in its socket when it closes",
  { skip: process.platform !== "linux" },
  async () => {
    const l = chooseUdpEngine("batched").listener(
      echoAtOnce,
      { address: "127.0.0.1", port: 0, reusePort: true },
      log,
    );
    const port = await l.bind("127.0.0.1", 0);
    // Its lookup answers at once, so each send reaches the listener's socket before send() returns.
    const sock = dgram.createSocket({ type: "udp4", lookup: literalLookup });
    await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
    const replies: number[] = [];
    sock.on("message", (m) => replies.push(m.readUInt16BE(0)));
    try {
      // Sent and closed in one turn of the event loop: the listener has not read any of them yet.
      for (let id = 0; id < 20; id++)
        sock.send(Buffer.from([id >> 8, id & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), port, "127.0.0.1");
      const closed = l.close();
      await closed;
      for (let i = 0; i < 50 && replies.length < 20; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(
        replies.sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i),
      );
    } finally {
      sock.close();
    }
  },
);

for (const name of UDP_ENGINES) {
  test(`the ${name} engine's socket gets a receive buffer of 4 MiB, or net.core.rmem_max when smaller`, async () => {
    const l = chooseUdpEngine(name).listener(
      echoAtOnce,
      { address: "127.0.0.1", port: 0, reusePort: false },
      log,
    );
    const port = await l.bind("127.0.0.1", 0);
    try {
      // ss shows the kernel's figure, which is twice what was granted (its bookkeeping share).
      const out = execFileSync("ss", ["-u", "-l", "-n", "-m", `sport = :${port}`], { encoding: "utf8" });
      const rb = Number(/rb(\d+)/.exec(out)?.[1]);
      const max = Number(readFileSync("/proc/sys/net/core/rmem_max", "utf8"));
      assert.equal(rb, 2 * Math.min(RECEIVE_BUFFER, max), out);
    } finally {
      await l.close();
    }
  });
}
