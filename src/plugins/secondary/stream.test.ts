import { test } from "node:test";
import assert from "node:assert/strict";
import type { Msg, RR } from "../../dns/message.ts";
import { newQuery } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { TransferReader, applyDiffs } from "./stream.ts";

const soa = (serial: number) => parseRRText(`example.org. 300 IN SOA ns. host. ${serial} 60 10 600 30`);
const rr = (text: string) => parseRRText(text, "example.org.");
const msg = (...answer: RR[]): Msg => ({ ...newQuery("example.org.", 252), qr: true, answer });
const text = (rrs: readonly RR[]) => rrs.map(rrToText).sort();

test("stream: an AXFR over several messages, ending at the SOA", () => {
  const r = new TransferReader("example.org.", undefined);
  assert.equal(r.push(msg(soa(5), rr("www 300 IN A 192.0.2.1"))), false);
  assert.equal(r.push(msg(rr("ftp 300 IN A 192.0.2.2"), soa(5))), true);
  const got = r.result();
  assert.equal(got.kind, "full");
  assert.deepEqual(
    got.kind === "full" && text(got.records),
    text([rr("www 300 IN A 192.0.2.1"), rr("ftp 300 IN A 192.0.2.2")]),
  );
});

test("stream: IXFR answers: current, incremental (RFC 1995 7's shape), and the whole zone", () => {
  const ours = soa(1);
  const current = new TransferReader("example.org.", ours);
  assert.equal(current.push(msg(soa(1))), true);
  assert.deepEqual(current.result(), { kind: "current", serial: 1 });

  // Two change sets: 1 -> 2 deletes www's address and adds another, 2 -> 3 adds a name.
  const inc = new TransferReader("example.org.", ours);
  const www1 = rr("www 300 IN A 192.0.2.1");
  const www2 = rr("www 300 IN A 192.0.2.2");
  const ftp = rr("ftp 300 IN A 192.0.2.3");
  assert.equal(inc.push(msg(soa(3), soa(1), www1, soa(2), www2)), false);
  assert.equal(inc.push(msg(soa(2), soa(3), ftp, soa(3))), true);
  const got = inc.result();
  assert.equal(got.kind, "diff");
  const records =
    got.kind === "diff" ? applyDiffs([soa(1), www1, rr("@ 300 IN NS ns")], 1, got.diffs, got.soa) : [];
  assert.deepEqual(text(records), text([soa(3), www2, ftp, rr("@ 300 IN NS ns")]));

  const full = new TransferReader("example.org.", ours);
  assert.equal(full.push(msg(soa(4), www2, soa(4))), true);
  assert.equal(full.result().kind, "full");
});

test("stream: what is not a transfer of the zone is refused", () => {
  const wrongZone = new TransferReader("example.org.", undefined);
  assert.throws(
    () => wrongZone.push(msg(parseRRText("example.net. 300 IN SOA ns. host. 1 1 1 1 1"))),
    /does not open/,
  );
  const late = new TransferReader("example.org.", undefined);
  assert.throws(() => late.push(msg(soa(1), soa(1), rr("www 300 IN A 192.0.2.1"))), /after the SOA/);
  const cut = new TransferReader("example.org.", undefined);
  cut.push(msg(soa(1), rr("www 300 IN A 192.0.2.1")));
  assert.throws(() => cut.result(), /did not end/);
  // A newer SOA alone answers an IXFR only over UDP: over TCP the secondary asks for AXFR.
  assert.throws(() => new TransferReader("example.org.", soa(1)).push(msg(soa(2))), /newer SOA alone/);
  // A change set that deletes what we do not hold, or starts elsewhere.
  const diffs = [{ from: 1, to: 2, deleted: [rr("gone 300 IN A 192.0.2.9")], added: [] }];
  assert.throws(() => applyDiffs([soa(1)], 1, diffs, soa(2)), /do not hold/);
  assert.throws(() => applyDiffs([soa(7)], 7, diffs, soa(2)), /from serial 1, we hold 7/);
});
