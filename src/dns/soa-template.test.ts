import { test } from "node:test";
import assert from "node:assert/strict";
import { encode, encodeInto, encoded, soaCopies } from "./encode.ts";
import type { Msg, RR } from "./message.ts";
import { Rcode, Type } from "./constants.ts";
import { wireKey } from "./name.ts";
import { readMessage, wireRecords } from "./wire-msg.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";
import { rng } from "../../test/helpers/rng.ts";

function soa(zone: string, mname: string, rname: string, serial = 1, ttl = 30): RR {
  return {
    name: zone,
    type: Type.SOA,
    class: 1,
    ttl,
    data: { type: Type.SOA, mname, rname, serial, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 },
  };
}

function negative(qname: string, rr: RR, withEdns: boolean, rcode: number = Rcode.NXDOMAIN): Msg {
  const m = queryMsg(qname, Type.A, { id: 0x1234, qr: true, aa: true, rcode });
  m.authority = [rr];
  if (withEdns) m.edns = { udpSize: 1232, version: 0, do: false, options: [] };
  return m;
}

/** What the lane writes: the question from the query's key (lowercased octets). */
function fromKey(m: Msg): Buffer {
  const key = Buffer.from(wireKey(m.question[0].name), "latin1");
  const n = encodeInto(m, key, 0, key.length);
  return Buffer.from(encoded().subarray(0, n));
}

/** The generic writer's octets for the same reply: the question written from its lowercased text. */
function generic(m: Msg): Buffer {
  return encode({ ...m, question: [{ ...m.question[0], name: m.question[0].name.toLowerCase() }] });
}

test("a negative answer's SOA copied from its template is what the generic writer writes", () => {
  const next = rng(20261129);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const zones = ["cluster.local.", "in-addr.arpa.", "example.org.", "a.b.c.d.example."];
  // Labels a question may have above the zone: some are those MNAME and RNAME have there.
  const labels = ["dns", "ns", "hostmaster", "DNS", "Hostmaster", "svc", "default", "x", "abc-12", "local"];
  const soas: RR[] = [];
  for (const zone of zones) {
    soas.push(soa(zone, `ns.dns.${zone}`, `hostmaster.${zone}`));
    soas.push(soa(zone, `ns.dns.${zone}`, `hostmaster.${zone}`, 2)); // a new serial
    soas.push(soa(zone, `ns.dns.${zone}`, `hostmaster.${zone}`, 2, 60)); // a new TTL
    soas.push(soa(zone, zone, `hostmaster.${zone}`, 3, 5)); // MNAME the zone itself
    soas.push(soa(zone, "ns1.example.net.", "root.example.net.")); // both outside the zone
    soas.push(soa(zone, `dns.${zone}`, `dns.${zone}`)); // RNAME points into MNAME
    soas.push(soa(zone, `ns.DNS.${zone}`, `host\\.master.${zone}`)); // case and an escape
  }
  const before = soaCopies.count;
  let cases = 0;
  for (let i = 0; i < 20_000; i++) {
    // Runs of 50 questions per record: the encoder keeps the templates of a few.
    const rr = soas[Math.floor(i / 50) % soas.length];
    const depth = Math.floor(next() * 4);
    let qname = next() < 0.05 ? "other.test." : rr.name;
    for (let d = 0; d < depth; d++) qname = `${pick(labels)}.${qname}`;
    const m = negative(qname, rr, next() < 0.5, next() < 0.8 ? Rcode.NXDOMAIN : Rcode.NOERROR);
    const want = generic(m);
    // The first of a record learns its template; every later one may copy it.
    assert.deepEqual(
      fromKey(m),
      want,
      `case ${i}: ${qname} with the SOA of ${rr.name} (${JSON.stringify(rr.data)})`,
    );
    cases++;
  }
  assert.equal(cases, 20_000);
  // Nearly half are copies (the others ask a label MNAME or RNAME has, or a record no template holds):
  // the test compares the template's octets, not only the generic writer's.
  assert.ok(soaCopies.count - before > 8_000, `${soaCopies.count - before} copies`);
});

test("a question whose label above the zone is MNAME's is written by the generic writer", () => {
  const rr = soa("cluster.local.", "ns.dns.cluster.local.", "hostmaster.cluster.local.", 77);
  fromKey(negative("a.b.cluster.local.", rr, false)); // learns
  const copied = soaCopies.count;
  fromKey(negative("c.cluster.local.", rr, false));
  assert.equal(soaCopies.count, copied + 1);
  // MNAME then points into the question at dns.cluster.local., not at the zone.
  const m = negative("x.dns.cluster.local.", rr, false);
  const out = fromKey(m);
  assert.equal(soaCopies.count, copied + 1);
  assert.deepEqual(out, generic(m));
  // "ns" then a pointer to offset 14, where the question's dns.cluster.local. starts.
  assert.ok(out.includes(Buffer.from([2, 0x6e, 0x73, 0xc0, 14])));
});

test("a changed SOA is not written from the template of the one before", () => {
  const rr = soa("cluster.local.", "ns.dns.cluster.local.", "hostmaster.cluster.local.", 100);
  fromKey(negative("a.cluster.local.", rr, true));
  const copied = soaCopies.count;
  const changed = soa("cluster.local.", "ns.dns.cluster.local.", "hostmaster.cluster.local.", 101);
  const m = negative("b.cluster.local.", changed, true);
  assert.deepEqual(fromKey(m), generic(m));
  assert.equal(soaCopies.count, copied, "the new serial was not copied from the old record");
});

test("a reply whose records are still octets is copied as they are, not decoded for a template", () => {
  const rr = soa("cluster.local.", "ns.dns.cluster.local.", "hostmaster.cluster.local.", 200);
  fromKey(negative("a.cluster.local.", rr, true)); // learns the template of the same record
  const copied = soaCopies.count;
  // An upstream's reply whose SOA owner is written whole (offset 33, where a pointer would be): its
  // octets go out as they came.
  const upstream = encode(negative("b.cluster.local.", rr, true));
  const whole = Buffer.concat([
    upstream.subarray(0, 33),
    Buffer.from([7, ...Buffer.from("cluster"), 5, ...Buffer.from("local"), 0]),
    upstream.subarray(35),
  ]);
  const m = readMessage(whole);
  assert.ok(wireRecords(m) !== undefined);
  const out = fromKey(m);
  assert.ok(wireRecords(m) !== undefined, "its sections were not decoded");
  assert.equal(soaCopies.count, copied);
  assert.deepEqual(out, whole);
});
