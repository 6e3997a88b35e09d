import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerCache, rotateInto, rotationOf } from "./answer-cache.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";
import { replyTo } from "../dns/message.ts";
import { parseRRText } from "../dns/text.ts";
import { scanQuery } from "../dns/scan.ts";
import { encode } from "../dns/encode.ts";
import { makeRequest } from "../../test/helpers/request.ts";

const entry = (generation: number, expires: number, tag = 1) => ({
  bytes: Buffer.from([tag]),
  generation,
  expires,
  rcode: 0,
  rflags: "qr,aa",
  plugin: "file",
  owner: undefined,
});

test("a stored answer is found until it expires", () => {
  const c = new AnswerCache();
  const before = { ...answerCacheStats };
  c.set("k", entry(c.generation, 1000));
  assert.equal(c.get("k", 999)?.bytes[0], 1);
  assert.equal(c.get("k", 1000), undefined);
  assert.equal(c.size, 0, "an expired entry is dropped when seen");
  assert.deepEqual([answerCacheStats.hits - before.hits, answerCacheStats.misses - before.misses], [1, 1]);
});

test("invalidate drops everything, and an answer computed before it is not stored", () => {
  const c = new AnswerCache();
  const before = c.generation;
  c.set("a", entry(before, 10_000));
  c.invalidate();
  assert.equal(c.get("a", 0), undefined);
  c.set("b", entry(before, 10_000));
  assert.equal(c.get("b", 0), undefined, "stale generation refused");
  c.set("b", entry(c.generation, 10_000));
  assert.ok(c.get("b", 0));
});

test("at capacity the oldest entry makes room", () => {
  const c = new AnswerCache(2);
  c.set("1", entry(0, 10_000, 1));
  c.set("2", entry(0, 10_000, 2));
  c.set("3", entry(0, 10_000, 3));
  assert.equal(c.size, 2);
  assert.equal(c.get("1", 0), undefined);
  assert.equal(c.get("3", 0)?.bytes[0], 3);
});

test("invalidateNames drops every entry of those names and nothing else", () => {
  const keyOf = (name: string, qtype: number, edns: boolean) => {
    const q = makeRequest(name, qtype, { edns }).msg;
    const s = scanQuery(encode(q));
    assert.ok(!("drop" in s));
    return s.key;
  };
  const c = new AnswerCache();
  const www = [keyOf("WWW.example.org", 1, false), keyOf("www.example.org", 28, true)];
  const other = keyOf("other.example.org", 1, false);
  const parent = keyOf("example.org", 1, false);
  for (const k of [...www, other, parent]) c.set(k, entry(c.generation, 10_000));
  const before = c.generation;
  c.invalidateNames(["www.example.org.", "absent.example.org."]);
  for (const k of www) assert.equal(c.get(k, 0), undefined);
  assert.ok(c.get(other, 0), "a sibling stays");
  assert.ok(c.get(parent, 0), "the parent stays");
  c.set(www[0], entry(before, 10_000));
  assert.equal(c.get(www[0], 0), undefined, "a reply computed across the change is not stored");
  assert.equal(c.size, 2);
});

/** An encoded reply to `name A` with these answer records, and where its question ends. */
function reply(name: string, answer: string[]): { bytes: Buffer; questionEnd: number } {
  const req = makeRequest(name, 1);
  const m = replyTo(req.msg);
  m.answer = answer.map((l) => parseRRText(l));
  const bytes = encode(m);
  const s = scanQuery(encode(req.msg));
  assert.ok(!("drop" in s));
  return { bytes, questionEnd: s.questionEnd };
}

test("rotation: address records of one name rotate by one place per replay, and only those", () => {
  const addrs = ["1", "2", "3"].map((n) => `web.test. 5 IN A 10.0.0.${n}`);
  const { bytes, questionEnd } = reply("web.test", addrs);
  const r = rotationOf(bytes, questionEnd);
  assert.ok(r);
  assert.deepEqual([r.at, r.count, r.size], [questionEnd, 3, 16]);
  const lastOctets = () => {
    const out = Buffer.from(bytes);
    rotateInto(out, bytes, r);
    assert.deepEqual(
      out.subarray(0, questionEnd),
      bytes.subarray(0, questionEnd),
      "header and question kept",
    );
    return [0, 1, 2].map((i) => out[questionEnd + i * 16 + 15]);
  };
  assert.deepEqual(
    [lastOctets(), lastOctets(), lastOctets(), lastOctets()],
    [
      [2, 3, 1],
      [3, 1, 2],
      [1, 2, 3],
      [2, 3, 1],
    ],
  );
  const q = reply("www.test", ["www.test. 5 IN CNAME web.test.", ...addrs]);
  assert.equal(rotationOf(q.bytes, q.questionEnd), undefined, "a CNAME before the addresses");
  const one = reply("web.test", addrs.slice(0, 1));
  assert.equal(rotationOf(one.bytes, one.questionEnd), undefined, "a single record");
  const other = reply("web.test", [addrs[0], "other.test. 5 IN A 10.0.0.9"]);
  assert.equal(rotationOf(other.bytes, other.questionEnd), undefined, "records of two names");
});
