import { test } from "node:test";
import assert from "node:assert/strict";
import { WireFacts, replyKind } from "./wire-facts.ts";
import { newQuery, replyTo, type Msg } from "../dns/message.ts";
import { parseRRText } from "../dns/text.ts";
import { encode } from "../dns/encode.ts";
import { Rcode, Type } from "../dns/constants.ts";

const SOA = "example.org. 300 IN SOA ns.example.org. admin.example.org. 1 7200 900 1209600 60";

/** A reply to `name qtype` with records in zone-file text, and the offset its question ends at. */
function reply(
  qtype: number,
  rcode: number,
  sections: { answer?: string[]; authority?: string[]; additional?: string[] },
): { msg: Msg; wire: Buffer; questionEnd: number } {
  const msg = replyTo(newQuery("www.example.org.", qtype), rcode);
  msg.answer = (sections.answer ?? []).map((l) => parseRRText(l));
  msg.authority = (sections.authority ?? []).map((l) => parseRRText(l));
  msg.additional = (sections.additional ?? []).map((l) => parseRRText(l));
  msg.edns = { udpSize: 1232, version: 0, do: false, options: [] };
  const wire = encode(msg);
  // The query without EDNS is the header and the question.
  return { msg, wire, questionEnd: encode(newQuery("www.example.org.", qtype)).length };
}

const facts = (f: WireFacts) => ({
  rcode: f.rcode,
  tc: f.tc,
  kind: f.kind,
  minTtl: f.minTtl,
  minTtlAll: f.minTtlAll,
  negativeTtl: f.negativeTtl,
  said: f.said,
  answers: f.answers,
});

test("the classifier reads the same facts off a reply's octets and off the decoded reply", () => {
  const cases: [string, ReturnType<typeof reply>, Partial<ReturnType<typeof facts>>][] = [
    [
      "success",
      reply(Type.A, Rcode.NOERROR, {
        answer: ["www.example.org. 30 IN A 10.0.0.1", "www.example.org. 20 IN A 10.0.0.2"],
        additional: ["ns.example.org. 10 IN A 10.0.0.53"],
      }),
      { kind: "success", minTtl: 20, minTtlAll: 10, said: 10, answers: true },
    ],
    [
      "NODATA",
      reply(Type.AAAA, Rcode.NOERROR, { authority: [SOA] }),
      { kind: "denial", negativeTtl: 60, said: 60, answers: false },
    ],
    ["NXDOMAIN", reply(Type.A, Rcode.NXDOMAIN, { authority: [SOA] }), { kind: "denial", said: 60 }],
    ["NXDOMAIN without a SOA", reply(Type.A, Rcode.NXDOMAIN, {}), { kind: "denial", said: -1 }],
    [
      "NXDOMAIN through a CNAME shorter-lived than the negative TTL",
      reply(Type.A, Rcode.NXDOMAIN, {
        answer: ["www.example.org. 10 IN CNAME gone.example.org."],
        authority: [SOA],
      }),
      { kind: "denial", negativeTtl: 60, said: 10 },
    ],
    [
      "referral",
      reply(Type.A, Rcode.NOERROR, { authority: ["www.example.org. 100 IN NS ns.other.org."] }),
      { kind: "success", said: 100, answers: false },
    ],
    ["SERVFAIL", reply(Type.A, Rcode.SERVFAIL, {}), { kind: "denial" }],
    ["REFUSED", reply(Type.A, Rcode.REFUSED, {}), { kind: undefined }],
    [
      "a CNAME to the type asked",
      reply(Type.A, Rcode.NOERROR, {
        answer: ["www.example.org. 50 IN CNAME web.example.org.", "web.example.org. 40 IN A 10.0.0.3"],
      }),
      { kind: "success", said: 40, answers: true },
    ],
  ];
  const wire = new WireFacts();
  const decoded = new WireFacts();
  for (const [what, r, want] of cases) {
    const qtype = r.msg.question[0].type;
    const a = facts(wire.read(r.wire, 0, r.wire.length, r.questionEnd, qtype));
    const b = facts(decoded.readMsg(r.msg, "www.example.org.", qtype));
    assert.deepEqual(b, a, `${what}: both readers agree`);
    for (const [k, v] of Object.entries(want)) assert.equal(a[k as keyof typeof a], v, `${what}: ${k}`);
  }
});

test("replyKind: NOERROR with records or a referral is a success; NODATA, NXDOMAIN, SERVFAIL denials", () => {
  assert.equal(replyKind(Rcode.NOERROR, 1, false), "success");
  assert.equal(replyKind(Rcode.NOERROR, 0, true), "success");
  assert.equal(replyKind(Rcode.NOERROR, 0, false), "denial");
  assert.equal(replyKind(Rcode.NXDOMAIN, 0, false), "denial");
  assert.equal(replyKind(Rcode.SERVFAIL, 0, false), "denial");
  assert.equal(replyKind(Rcode.REFUSED, 0, false), undefined);
  assert.equal(replyKind(Rcode.FORMERR, 1, false), undefined);
});
