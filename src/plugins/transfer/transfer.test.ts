import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import type { Msg, RR } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { encode } from "../../dns/encode.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import type { Request } from "../../chain/request.ts";
import { MESSAGE_BUDGET, newer, transferHandler } from "./transfer.ts";
import { Secondaries } from "./secondaries.ts";
import type { Transferer, Unavailable, ZoneTransfer } from "./transferer.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";

const log = pino({ level: "silent" });
const ZONE = "example.org.";
const SERIAL = 2024060101;
const SOA = parseRRText(
  `example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. ${SERIAL} 7200 900 1209600 300`,
);

/** A zone of n A records, made in arrays of 10; `made` counts the arrays made so far. */
function zoneOf(n: number): ZoneTransfer & { made: number } {
  const z = {
    soa: SOA,
    made: 0,
    *records(): Generator<RR[]> {
      for (let i = 0; i < n; i += 10) {
        z.made++;
        const chunk: RR[] = [];
        for (let j = i; j < Math.min(n, i + 10); j++) {
          chunk.push(parseRRText(`host-${j}.example.org. 300 IN A 10.0.${j >> 8}.${j & 255}`));
        }
        yield chunk;
      }
    },
  };
  return z;
}

function source(zones: Record<string, ZoneTransfer | Unavailable>): Transferer {
  return { name: "fake", zones: () => Object.keys(zones), transfer: (zone) => zones[zone] };
}

function handler(o: { to?: string[]; sources?: Transferer[]; zones?: string[] } = {}) {
  const to = new Secondaries();
  for (const t of o.to ?? ["127.0.0.1"]) assert.equal(to.add(t), undefined);
  const next = recordingNext();
  const h = transferHandler(
    { zones: o.zones ?? [ZONE], to, sources: () => o.sources ?? [source({ [ZONE]: zoneOf(25) })], log },
    next,
  );
  return { h, next };
}

interface Streamed {
  req: Request;
  sent: Msg[];
}

/** A TCP request whose stream keeps what it is given (false after `closeAfter` messages). */
function tcpRequest(name: string, qtype: number, o: { serial?: number; closeAfter?: number } = {}): Streamed {
  const sent: Msg[] = [];
  const base = makeRequest(name, qtype, { proto: "tcp" });
  if (o.serial !== undefined)
    base.msg.authority = [{ ...SOA, data: { ...SOA.data, serial: o.serial } as RR["data"] }];
  const req: Request = {
    ...base,
    stream: (m) => {
      sent.push(m);
      return Promise.resolve(o.closeAfter === undefined || sent.length < o.closeAfter);
    },
  };
  return { req, sent };
}

const answers = (msgs: Msg[]) => msgs.flatMap((m) => m.answer).map(rrToText);

describe("transfer", () => {
  it("passes on other types and names outside its zones", async () => {
    const { h, next } = handler();
    await h.serve(makeRequest("www.example.org", Type.A, { proto: "tcp" }));
    await h.serve(tcpRequest("example.com", Type.AXFR).req);
    assert.equal(next.calls.length, 2);
  });

  it("sends the zone over TCP: SOA, records, SOA, every message but the last through the stream", async () => {
    const { h } = handler();
    const { req, sent } = tcpRequest("example.org", Type.AXFR);
    const last = await h.serve(req);
    const all = answers([...sent, last]);
    assert.equal(all.length, 27);
    assert.equal(all[0], rrToText(SOA));
    assert.equal(all.at(-1), rrToText(SOA));
    assert.equal(all[1], "host-0.example.org.\t300\tIN\tA\t10.0.0.0");
    assert.equal(last.rcode, Rcode.NOERROR);
    assert.ok(last.aa);
    // Different for every client and serial: never kept by the answer cache.
    assert.ok(req.cache.private);
    assert.equal(req.answeredBy, "transfer");
  });

  it("fills messages to the budget and keeps every one under 64 KiB", async () => {
    const zone = zoneOf(20_000);
    const { h } = handler({ sources: [source({ [ZONE]: zone })] });
    const { req, sent } = tcpRequest("example.org", Type.AXFR);
    const last = await h.serve(req);
    const msgs = [...sent, last];
    assert.equal(answers(msgs).length, 20_002);
    assert.ok(msgs.length > 10, `${msgs.length} messages`);
    for (const m of msgs) {
      const size = encode(m).length;
      assert.ok(size < 65535 && size > MESSAGE_BUDGET / 4, `message of ${size} octets`);
    }
  });

  it("makes records only as fast as the stream takes them", async () => {
    const zone = zoneOf(20_000);
    const { h } = handler({ sources: [source({ [ZONE]: zone })] });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const base = makeRequest("example.org", Type.AXFR, { proto: "tcp" });
    let writes = 0;
    const reply = h.serve({
      ...base,
      stream: () => (++writes === 1 ? gate.then(() => true) : Promise.resolve(true)),
    });
    await new Promise((r) => setTimeout(r, 20));
    // Stuck on the first message: only what fits in it (and the array that overflowed it) was made.
    assert.equal(writes, 1);
    assert.ok(zone.made < 200, `${zone.made} of 2000 arrays made before the first write returned`);
    release();
    await reply;
    assert.equal(zone.made, 2000);
  });

  it("stops when the client is gone", async () => {
    const zone = zoneOf(20_000);
    const { h } = handler({ sources: [source({ [ZONE]: zone })] });
    const { req, sent } = tcpRequest("example.org", Type.AXFR, { closeAfter: 2 });
    const last = await h.serve(req);
    assert.equal(sent.length, 2);
    assert.equal(last.rcode, Rcode.SERVFAIL);
    assert.ok(zone.made < 2000);
  });

  it("refuses clients not in 'to', over TCP and UDP, AXFR and IXFR", async () => {
    const { h } = handler({ to: ["10.0.0.1", "192.0.2.0/24"] });
    for (const [qtype, proto] of [
      [Type.AXFR, "tcp"],
      [Type.IXFR, "tcp"],
      [Type.IXFR, "udp"],
    ] as const) {
      const req = makeRequest("example.org", qtype, { proto, remoteAddress: "127.0.0.1" });
      assert.equal((await h.serve(req)).rcode, Rcode.REFUSED, `${qtype} ${proto}`);
    }
    const ok = tcpRequest("example.org", Type.AXFR);
    const req = { ...ok.req, remoteAddress: "192.0.2.77" };
    assert.equal((await h.serve(req)).rcode, Rcode.NOERROR);
  });

  it("refuses AXFR over UDP (RFC 5936 4.2 defines none)", async () => {
    const { h } = handler();
    const reply = await h.serve(makeRequest("example.org", Type.AXFR, { proto: "udp" }));
    assert.equal(reply.rcode, Rcode.REFUSED);
    assert.deepEqual(reply.answer, []);
  });

  it("answers NOTAUTH for a name below the apex or a zone no source holds", async () => {
    const { h } = handler({ zones: [ZONE, "example.net."] });
    for (const name of ["www.example.org", "example.net"]) {
      assert.equal((await h.serve(tcpRequest(name, Type.AXFR).req)).rcode, Rcode.NOTAUTH, name);
    }
  });

  it("answers SERVFAIL while the source cannot send the zone", async () => {
    const { h } = handler({ sources: [source({ [ZONE]: { unavailable: "not synced" } })] });
    assert.equal((await h.serve(tcpRequest("example.org", Type.AXFR).req)).rcode, Rcode.SERVFAIL);
  });

  it("asks the sources in order and takes the first that holds the zone", async () => {
    const other = zoneOf(3);
    const { h } = handler({
      sources: [source({}), source({ [ZONE]: other }), source({ [ZONE]: zoneOf(25) })],
    });
    const { req, sent } = tcpRequest("example.org", Type.AXFR);
    assert.equal(answers([...sent, await h.serve(req)]).length, 5);
  });

  describe("IXFR (RFC 1995)", () => {
    it("answers FORMERR without the client's SOA in the authority section", async () => {
      const { h } = handler();
      assert.equal((await h.serve(tcpRequest("example.org", Type.IXFR).req)).rcode, Rcode.FORMERR);
    });

    it("answers the single SOA when the client's serial is current or newer", async () => {
      const { h } = handler();
      for (const serial of [SERIAL, SERIAL + 1, SERIAL + 0x7fffffff]) {
        const { req, sent } = tcpRequest("example.org", Type.IXFR, { serial });
        const reply = await h.serve(req);
        assert.deepEqual(answers([reply]), [rrToText(SOA)], `serial ${serial}`);
        assert.equal(sent.length, 0);
      }
    });

    it("sends the whole zone, as AXFR does, when the client's serial is older", async () => {
      const { h } = handler();
      // 0x80000001 ahead wraps round to behind (RFC 1982).
      for (const serial of [SERIAL - 1, 1, (SERIAL + 0x80000001) >>> 0]) {
        const { req, sent } = tcpRequest("example.org", Type.IXFR, { serial });
        const all = answers([...sent, await h.serve(req)]);
        assert.equal(all.length, 27, `serial ${serial}`);
        assert.equal(all[0], rrToText(SOA));
        assert.equal(all.at(-1), rrToText(SOA));
      }
    });

    it("sends the differences (RFC 1995 4) when the source has them from the client's serial", async () => {
      const old = { ...SOA, data: { ...SOA.data, serial: SERIAL - 1 } as RR["data"] };
      const removed = parseRRText("gone.example.org. 300 IN A 192.0.2.9");
      const added = parseRRText("new.example.org. 300 IN A 192.0.2.10");
      const z: ZoneTransfer = {
        ...zoneOf(25),
        changes: (serial) =>
          serial === SERIAL - 1 ? [{ from: old, to: SOA, removed: [removed], added: [added] }] : undefined,
      };
      const { h } = handler({ sources: [source({ [ZONE]: z })] });
      const { req, sent } = tcpRequest("example.org", Type.IXFR, { serial: SERIAL - 1 });
      assert.deepEqual(
        answers([...sent, await h.serve(req)]),
        [SOA, old, removed, SOA, added, SOA].map(rrToText),
      );
      // A serial the source has no changes from: the whole zone.
      const other = tcpRequest("example.org", Type.IXFR, { serial: SERIAL - 2 });
      assert.equal(answers([...other.sent, await h.serve(other.req)]).length, 27);
    });

    it("over UDP answers the single SOA: the zone does not fit, so the client asks again over TCP", async () => {
      const { h } = handler();
      const req = makeRequest("example.org", Type.IXFR, { proto: "udp" });
      req.msg.authority = [{ ...SOA, data: { ...SOA.data, serial: 1 } as RR["data"] }];
      assert.deepEqual(answers([await h.serve(req)]), [rrToText(SOA)]);
    });
  });

  it("compares serials as RFC 1982 does", () => {
    assert.ok(newer(2, 1));
    assert.ok(!newer(1, 2));
    assert.ok(!newer(5, 5));
    assert.ok(newer(0, 0xffffffff));
    assert.ok(!newer(0xffffffff, 0));
    assert.ok(newer(0x7fffffff, 0));
    assert.ok(!newer(0x80000000, 0), "exactly half way round is undefined: not newer");
  });
});
