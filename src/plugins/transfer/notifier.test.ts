// The notifier's rules with an injected exchange and clock: which zones it watches, the hold between
// two NOTIFYs of a zone, the bounded retransmissions, and a newer serial replacing an unanswered
// NOTIFY. Knot answering real NOTIFYs is test/transfer-notify.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Exchange } from "../../client/udp-exchange.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { replyTo } from "../../dns/message.ts";
import { Opcode, Type } from "../../dns/constants.ts";
import { parseRRText } from "../../dns/text.ts";
import { Notifier, type NotifierOptions } from "./notifier.ts";
import type { Transferer } from "./transferer.ts";

function soaOf(zone: string, serial: number): RR {
  return parseRRText(`${zone} 60 IN SOA ns.${zone} host.${zone} ${serial} 3600 600 86400 60`);
}

/** A source whose zones' serials the test sets. */
function source(serials: Map<string, number>): Transferer {
  return {
    name: "fake",
    zones: () => serials.keys(),
    transfer: (zone) => {
      const serial = serials.get(zone);
      return serial === undefined ? undefined : { soa: soaOf(zone, serial), records: () => [] };
    },
  };
}

interface Sent {
  host: string;
  port: number;
  msg: Msg;
}

function notifier(o: Partial<NotifierOptions> & { serials: Map<string, number>; answer?: boolean }) {
  const sent: Sent[] = [];
  const lines: { msg: string; [k: string]: unknown }[] = [];
  const exchange: Exchange = (host, port, msg) => {
    sent.push({ host, port, msg });
    if (o.answer === false) return Promise.resolve(undefined);
    return Promise.resolve({ ...replyTo(msg), aa: true });
  };
  const log = pino({ level: "debug" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const n = new Notifier({
    zones: ["example.org."],
    targets: [
      { host: "127.0.0.1", port: 5300 },
      { host: "fd00::5", port: 53 },
    ],
    sources: () => [source(o.serials)],
    log,
    exchange,
    firstWaitMs: 1,
    ...o,
  });
  return { n, sent, lines };
}

test("notifier: a zone's serial is notified to every target, once, with the SOA as question and answer", async () => {
  const serials = new Map([
    ["example.org.", 7],
    ["sub.example.org.", 1],
    ["example.com.", 3],
  ]);
  const { n, sent, lines } = notifier({ serials });
  await Promise.all(n.poll());
  // example.com is not the stanza's.
  assert.deepEqual(
    sent.map((s) => `${s.msg.question[0].name} ${s.host}:${s.port}`),
    [
      "example.org. 127.0.0.1:5300",
      "example.org. fd00::5:53",
      "sub.example.org. 127.0.0.1:5300",
      "sub.example.org. fd00::5:53",
    ],
  );
  const m = sent[0].msg;
  assert.equal(m.opcode, Opcode.NOTIFY);
  assert.ok(m.aa && !m.qr);
  assert.equal(m.question[0].type, Type.SOA);
  assert.equal((m.answer[0].data as { serial: number }).serial, 7);
  assert.equal(lines.filter((l) => l.msg === "NOTIFY answered").length, 4);
  // Nothing changed: nothing sent.
  await Promise.all(n.poll());
  assert.equal(sent.length, 4);
});

test("notifier: a zone that changes every poll is notified once per hold, and its last serial always", async () => {
  const serials = new Map([["example.org.", 1]]);
  let clock = 0;
  const { n, sent } = notifier({
    serials,
    holdMs: 5000,
    now: () => clock,
    targets: [{ host: "::1", port: 53 }],
  });
  // A busy cluster: a new serial every second for 20 s.
  for (let s = 1; s <= 20; s++) {
    serials.set("example.org.", s);
    clock = s * 1000;
    await Promise.all(n.poll());
  }
  const notified = sent.map((x) => (x.msg.answer[0].data as { serial: number }).serial);
  assert.deepEqual(notified, [1, 6, 11, 16]);
  // Quiet again: the last serial goes out once its hold is over, and nothing after.
  clock = 25_000;
  await Promise.all(n.poll());
  clock = 40_000;
  await Promise.all(n.poll());
  assert.deepEqual(
    sent.map((x) => (x.msg.answer[0].data as { serial: number }).serial),
    [1, 6, 11, 16, 20],
  );
});

test("notifier: an unanswered NOTIFY is sent again a bounded number of times, then logged", async () => {
  const serials = new Map([["example.org.", 1]]);
  const { n, sent, lines } = notifier({ serials, answer: false, targets: [{ host: "127.0.0.1", port: 53 }] });
  await Promise.all(n.poll());
  // The first send and RFC 1996 3.6's five retransmissions, each with a new ID.
  assert.equal(sent.length, 6);
  assert.equal(new Set(sent.map((s) => s.msg.id)).size > 1, true);
  const gaveUp = lines.filter((l) => l.msg.startsWith("NOTIFY not answered"));
  assert.equal(gaveUp.length, 1);
  assert.equal(gaveUp[0].sends, 6);
});

test("notifier: a newer serial replaces a NOTIFY still waiting for its answer; stop ends the retries", async () => {
  const serials = new Map([["example.org.", 1]]);
  let clock = 0;
  const waits: (() => void)[] = [];
  const sent: number[] = [];
  const { n } = notifier({
    serials,
    holdMs: 0,
    now: () => clock,
    targets: [{ host: "127.0.0.1", port: 53 }],
    // Never answers; each send waits until the test lets it time out.
    exchange: (_h, _p, msg) => {
      sent.push((msg.answer[0].data as { serial: number }).serial);
      return new Promise((r) => waits.push(() => r(undefined)));
    },
  });
  const first = n.poll();
  serials.set("example.org.", 2);
  clock = 1;
  const second = n.poll();
  // Serial 1's wait times out: it is not sent again, serial 2 is.
  waits.shift()!();
  await Promise.all(first);
  waits.shift()!();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent, [1, 2, 2]);
  n.stop();
  waits.shift()!();
  await Promise.all(second);
  assert.deepEqual(sent, [1, 2, 2]);
});

test("notifier: zones a source cannot offer yet (kubernetes before its sync) wait until it can", async () => {
  let synced = false;
  const sent: Sent[] = [];
  const n = new Notifier({
    zones: ["cluster.local."],
    targets: [{ host: "127.0.0.1", port: 53 }],
    sources: () => [
      {
        name: "kubernetes",
        zones: () => ["cluster.local."],
        transfer: () =>
          synced ? { soa: soaOf("cluster.local.", 9), records: () => [] } : { unavailable: "not synced" },
      },
    ],
    log: pino({ level: "silent" }),
    exchange: (host, port, msg) => {
      sent.push({ host, port, msg });
      return Promise.resolve(replyTo(msg));
    },
  });
  await Promise.all(n.poll());
  assert.equal(sent.length, 0);
  synced = true;
  await Promise.all(n.poll());
  assert.equal(sent.length, 1);
});
