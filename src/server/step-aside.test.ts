// The main thread steps aside during a watch storm (step-aside.ts): its UDP sockets leave the port's
// SO_REUSEPORT group while a backlog of watch events is applied, and come back after it. The
// controller is driven here with a recorded instance; the instance's part with real sockets, a plain
// dgram socket in the same group standing in for a worker thread.

import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { pino } from "pino";
import { APPLY_REST_MS, StepAside, type Steps } from "./step-aside.ts";
import { watchBacklog } from "../runtime/watch-backlog.ts";
import { stepAsideStats } from "../metrics/server-stats.ts";
import { Instance } from "./instance.ts";
import { chooseUdpEngine } from "./udp-engine.ts";
import { parseCorefile } from "../corefile/parser.ts";
import { plugins } from "../plugins/index.ts";

const log = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Recorded implements Steps {
  readonly calls: boolean[] = [];
  fail = false;
  stepAside(aside: boolean): Promise<boolean> {
    this.calls.push(aside);
    if (this.fail && !aside) return Promise.reject(new Error("EADDRINUSE"));
    return Promise.resolve(true);
  }
}

async function until(what: () => boolean, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !what(); await sleep(5))
    if (Date.now() > end) throw new Error("timed out waiting");
}

test("steps aside while a backlog lasts, and back only once it has been applied for rejoinMs", async () => {
  const steps = new Recorded();
  const c = new StepAside({ current: () => steps, workersReady: () => true, log, rejoinMs: 60 });
  c.backlog(true);
  await until(() => c.aside);
  assert.deepEqual(steps.calls, [true]);
  assert.equal(watchBacklog.restMs, APPLY_REST_MS, "the writer keeps to half a core while aside");
  assert.deepEqual(stepAsideStats, { aside: 1, times: 1 }, "what the metrics say");
  // A storm's bursts: applied, then the next one within rejoinMs: the sockets stay aside.
  c.backlog(false);
  await sleep(20);
  c.backlog(true);
  c.backlog(false);
  await sleep(20);
  assert.deepEqual(steps.calls, [true]);
  await until(() => !c.aside);
  assert.deepEqual(steps.calls, [true, false]);
  assert.equal(watchBacklog.restMs, 0);
  assert.deepEqual(stepAsideStats, { aside: 0, times: 1 });
  c.stop();
});

test("never steps aside while a worker is not listening, and comes back when one stops", async () => {
  let ready = false;
  const steps = new Recorded();
  const c = new StepAside({
    current: () => steps,
    workersReady: () => ready,
    log,
    rejoinMs: 60_000,
    checkMs: 5,
  });
  c.backlog(true);
  await sleep(30);
  assert.deepEqual(steps.calls, [], "the workers' sockets are not the port yet");
  c.backlog(false);
  ready = true;
  c.backlog(true);
  await until(() => c.aside);
  // A worker died (its sockets left with it): back at once, backlog or not.
  ready = false;
  await until(() => !c.aside);
  assert.deepEqual(steps.calls, [true, false]);
  c.stop();
});

test("a socket that cannot open again is tried again; the instance of a reload is the one moved", async () => {
  const first = new Recorded();
  const second = new Recorded();
  let current = first;
  const c = new StepAside({ current: () => current, workersReady: () => true, log, rejoinMs: 20 });
  c.backlog(true);
  await until(() => c.aside);
  current = second;
  second.fail = true;
  c.backlog(false);
  await until(() => second.calls.length >= 2);
  assert.ok(c.aside, "still aside while its sockets cannot open");
  second.fail = false;
  await until(() => !c.aside);
  assert.deepEqual(first.calls, [true]);
  assert.ok(second.calls.every((a) => !a));
  c.stop();
});

/** A started instance of `corefile` whose DNS sockets share their port with others (-workers N). */
async function sharing(corefile: string, previous?: Instance): Promise<Instance> {
  const inst = await Instance.create({
    blocks: parseCorefile(corefile, "Corefile"),
    root: ".",
    defaultPort: 0,
    log,
    plugins,
    shareDnsPort: true,
    udpEngine: chooseUdpEngine("batched"),
    takesOver: previous !== undefined,
    previous,
  });
  if (previous) await inst.takeOver(previous, { readyWaitMs: 5000 });
  else await inst.start();
  return inst;
}

/** Asks `port` once over UDP, from a socket (a source port) of its own; the reply's rcode, or
 * undefined without one in 2 s. */
async function rcodeOf(port: number): Promise<number | undefined> {
  const s = dgram.createSocket("udp4");
  const reply = new Promise<Buffer>((r) => s.once("message", r));
  s.send(Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 120, 0, 0, 1, 0, 1]), port, "127.0.0.1");
  const m = await Promise.race([reply, sleep(2000).then(() => undefined)]);
  s.close();
  return m && m[3] & 15;
}

test(
  "sockets that stepped aside come back on the instance a reload put in place",
  { skip: process.platform !== "linux" },
  async () => {
    const first = await sharing(`. {\n bind 127.0.0.1\n whoami\n}\n`);
    const port = first.ports[0];
    assert.equal(await first.stepAside(true), true);
    // Nothing else holds the port: aside, a query finds no socket.
    assert.equal(await rcodeOf(port), undefined);
    const second = await sharing(`. {\n bind 127.0.0.1\n errors\n whoami\n}\n`, first);
    try {
      assert.equal(await rcodeOf(port), undefined, "the reload keeps them aside");
      assert.equal(await second.stepAside(false), true);
      assert.equal(await rcodeOf(port), 0, "back, on the new instance");
    } finally {
      await second.stop();
    }
  },
);

for (const address of ["127.0.0.1", "0.0.0.0"]) {
  test(
    `an instance's UDP sockets on ${address} leave the port's group and join it again`,
    { skip: process.platform !== "linux" },
    async () => {
      const bind = address === "0.0.0.0" ? "" : `bind ${address}`;
      const inst = await sharing(`. {\n ${bind}\n whoami\n}\n`);
      const port = inst.ports[0];
      // The stand-in worker: answers with its own mark (REFUSED) on the same port.
      const worker = dgram.createSocket({ type: "udp4", reusePort: true });
      worker.on("message", (m, from) => {
        const out = Buffer.from(m.subarray(0, 12));
        out[2] |= 0x80;
        out[3] = 5;
        worker.send(out, from.port, from.address);
      });
      await new Promise<void>((r) => worker.bind(port, address, r));
      // From 40 source ports, one query each: the kernel spreads them over the group by their ports.
      const ask = async () => {
        const who = { instance: 0, worker: 0 };
        await Promise.all(
          Array.from({ length: 40 }, async () => {
            const rcode = await rcodeOf(port);
            assert.ok(rcode !== undefined, "every query is answered");
            if (rcode === 5) who.worker++;
            else who.instance++;
          }),
        );
        return who;
      };
      try {
        const before = await ask();
        assert.ok(before.instance > 0 && before.worker > 0, JSON.stringify(before));
        assert.equal(await inst.stepAside(true), true);
        assert.deepEqual(await ask(), { instance: 0, worker: 40 });
        assert.equal(await inst.stepAside(true), false, "already aside");
        assert.equal(await inst.stepAside(false), true);
        const after = await ask();
        assert.ok(after.instance > 0 && after.worker > 0, JSON.stringify(after));
      } finally {
        worker.close();
        await inst.stop();
      }
    },
  );
}
