import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerStore, DROP_AT, Draft, EXPIRES, FLAG, NO_SLOT } from "./store.ts";
import { hashBytes, latin1Bytes } from "../dns/key.ts";
import { rotateRecords, rotationOf, replayInto } from "./replay.ts";
import { replyTo } from "../dns/message.ts";
import { parseRRText } from "../dns/text.ts";
import { scanQuery } from "../dns/scan.ts";
import { encode } from "../dns/encode.ts";
import { makeRequest } from "../../test/helpers/request.ts";

/** A key for a name of one label and a type, as scan.ts builds them. */
const key = (label: string, type = 1, cls = 1) =>
  `${String.fromCharCode(label.length)}${label}\0${String.fromCharCode(type >> 8, type & 0xff, cls >> 8, cls & 0xff)}0`;

function put(
  store: AnswerStore,
  k: string,
  o: {
    tag?: number;
    expires?: number;
    dropAt?: number;
    pool?: number;
    generation?: number;
    size?: number;
    flags?: number;
  } = {},
): number {
  const d = new Draft();
  d.pool = o.pool ?? 0;
  d.flags = o.flags ?? 0;
  d.times[EXPIRES] = o.expires ?? 10_000;
  d.times[DROP_AT] = o.dropAt ?? 0;
  const kb = latin1Bytes(k);
  const reply = new Uint8Array(o.size ?? 1).fill(o.tag ?? 1);
  return store.put(d, { ...octets(kb, reply), generation: o.generation ?? store.generation });
}

/** put()'s octets: the whole of `key` and of `reply`. */
function octets(key: Uint8Array, reply: Uint8Array) {
  const hash = hashBytes(key, 0, key.length);
  return { key, keyFrom: 0, keyLength: key.length, hash, reply, replyFrom: 0, replyLength: reply.length };
}

function get(store: AnswerStore, k: string, now = 0): number {
  const kb = latin1Bytes(k);
  store.clock[0] = now;
  return store.get(kb, 0, kb.length, hashBytes(kb, 0, kb.length));
}

const tag = (store: AnswerStore, s: number) => (s === NO_SLOT ? undefined : store.reply(s)[0]);

test("a stored answer is found until its dropAt, and dropped when seen past it", () => {
  const c = new AnswerStore();
  put(c, key("k"), { expires: 1000, dropAt: 5000 });
  assert.equal(c.expires(get(c, key("k"), 999)), 1000);
  assert.notEqual(get(c, key("k"), 4999), NO_SLOT, "stale within dropAt: the caller judges");
  assert.equal(get(c, key("k"), 5000), NO_SLOT);
  assert.equal(c.size, 0, "an expired entry is dropped when seen");
});

test("a key stored again replaces the entry; keys differing only in type or state are apart", () => {
  const c = new AnswerStore();
  put(c, key("www", 1), { tag: 1 });
  put(c, key("www", 28), { tag: 2 });
  put(c, key("www", 1), { tag: 3 });
  assert.equal(c.size, 2);
  assert.equal(tag(c, get(c, key("www", 1))), 3);
  assert.equal(tag(c, get(c, key("www", 28))), 2);
});

test("invalidate drops everything, and an answer computed before it is not stored", () => {
  const c = new AnswerStore();
  const before = c.generation;
  put(c, key("a"));
  c.invalidate();
  assert.equal(get(c, key("a")), NO_SLOT);
  assert.equal(put(c, key("b"), { generation: before }), NO_SLOT, "stale generation refused");
  assert.notEqual(put(c, key("b")), NO_SLOT);
});

test("invalidateNames drops every entry of those names and nothing else", () => {
  const keyOf = (name: string, qtype: number, edns: boolean) => {
    const s = scanQuery(encode(makeRequest(name, qtype, { edns }).msg));
    assert.ok(!("drop" in s));
    return s.key;
  };
  const c = new AnswerStore();
  const www = [keyOf("WWW.example.org", 1, false), keyOf("www.example.org", 28, true)];
  const other = keyOf("other.example.org", 1, false);
  const parent = keyOf("example.org", 1, false);
  for (const k of [...www, other, parent]) put(c, k);
  const before = c.generation;
  c.invalidateNames(["www.example.org.", "absent.example.org."]);
  for (const k of www) assert.equal(get(c, k), NO_SLOT);
  assert.notEqual(get(c, other), NO_SLOT, "a sibling stays");
  assert.notEqual(get(c, parent), NO_SLOT, "the parent stays");
  assert.equal(put(c, www[0], { generation: before }), NO_SLOT, "a reply computed across the change");
  assert.equal(c.size, 2);
  // A name with an escaped dot is one label: it and the three-label name apart.
  const escaped = keyOf("a\\.b.example.org", 1, false);
  const plain = keyOf("a.b.example.org", 1, false);
  put(c, escaped);
  put(c, plain);
  c.invalidateNames(["a\\.b.example.org."]);
  assert.equal(get(c, escaped), NO_SLOT);
  assert.notEqual(get(c, plain), NO_SLOT);
  c.invalidateNames(["a.b.example.org."]);
  assert.equal(get(c, plain), NO_SLOT);
});

test("a reply computed across a change of other names is stored; across a full invalidation it is not", () => {
  const c = new AnswerStore();
  const started = c.generation;
  c.invalidateNames(["other.", "more."]);
  assert.notEqual(put(c, key("www"), { generation: started }), NO_SLOT, "an unrelated change");
  assert.equal(put(c, key("other"), { generation: started }), NO_SLOT, "its own name changed meanwhile");
  const later = c.generation;
  c.invalidate();
  assert.equal(put(c, key("x"), { generation: later }), NO_SLOT);
});

test("a change is never forgotten: a reply computed before its name changed is refused however many changes came since", () => {
  const c = new AnswerStore();
  const started = c.generation;
  c.invalidateNames(["a."]);
  for (let i = 0; i < 200_000; i++) c.invalidateNames([`n${i}.`]);
  assert.equal(put(c, key("a"), { generation: started }), NO_SLOT);
  const recent = c.generation;
  c.invalidateNames(["a."]);
  c.invalidateNames(["b."]);
  assert.equal(put(c, key("a"), { generation: recent }), NO_SLOT, "changed again after the reply");
  assert.notEqual(put(c, key("a"), { generation: c.generation }), NO_SLOT);
});

test("names sharing a slot of the changes' table: a reply is refused for its neighbour's change, never stored stale", () => {
  // One slot: every name shares it.
  const c = new AnswerStore({ changeSlots: 1 });
  const started = c.generation;
  c.invalidateNames(["other."]);
  assert.equal(put(c, key("www"), { generation: started }), NO_SLOT, "refused: other. shares its slot");
  const later = c.generation;
  c.invalidateNames(["www."]);
  c.invalidateNames(["other."]);
  assert.equal(
    put(c, key("www"), { generation: later }),
    NO_SLOT,
    "its own change is not hidden by a later one",
  );
  // With the default table, an unrelated change does not refuse it.
  const d = new AnswerStore();
  const before = d.generation;
  d.invalidateNames(["other.", "more."]);
  assert.notEqual(put(d, key("www"), { generation: before }), NO_SLOT);
  assert.throws(() => new AnswerStore({ changeSlots: 3 }), /not a power of 2/);
});

test("at capacity the CLOCK makes room: an entry hit since the hand passed gets another round", () => {
  const c = new AnswerStore({ capacity: 3 });
  for (const k of ["1", "2", "3"]) put(c, key(k));
  c.touch(get(c, key("1")));
  put(c, key("4"));
  assert.equal(c.size, 3);
  assert.notEqual(get(c, key("1")), NO_SLOT, "used: kept");
  assert.equal(get(c, key("2")), NO_SLOT, "the first unused one went");
  put(c, key("5"));
  assert.equal(get(c, key("3")), NO_SLOT);
  assert.deepEqual(
    ["1", "4", "5"].map((k) => get(c, key(k)) !== NO_SLOT),
    [true, true, true],
  );
});

test("pools are bounded apart, and each eviction is reported to the pool's owner", () => {
  const c = new AnswerStore({ capacity: 100 });
  let evicted = 0;
  const small = c.addPool(2, () => evicted++);
  for (let i = 0; i < 5; i++) put(c, key(`s${i}`), { pool: small });
  for (let i = 0; i < 50; i++) put(c, key(`p${i}`));
  assert.deepEqual([c.poolSize(small), c.poolSize(0), evicted], [2, 50, 3]);
  assert.equal(c.pool(get(c, key("s4"))), small);
});

test("the entries of one name stay findable for invalidation as others of it come and go", () => {
  const c = new AnswerStore();
  for (const t of [1, 28, 33, 16]) put(c, key("www", t), { expires: t === 28 ? 500 : 10_000 });
  assert.equal(get(c, key("www", 28), 600), NO_SLOT, "one from the middle of the list expires");
  put(c, key("www", 16), { tag: 2 }); // the head replaced
  put(c, key("ftp"));
  c.invalidateNames(["www."]);
  assert.deepEqual(
    [1, 28, 33, 16].map((t) => get(c, key("www", t))),
    [NO_SLOT, NO_SLOT, NO_SLOT, NO_SLOT],
  );
  assert.equal(c.size, 1, "ftp. stays");
});

test("one name with an entry per type and class at capacity: every entry still goes with the name", () => {
  // Found by the soak's fuzz (random QTYPEs for a name that exists): the name's chain must stay whole
  // while the CLOCK takes entries from its middle.
  const capacity = 2000;
  const c = new AnswerStore({ capacity });
  for (let i = 0; i < 3 * capacity; i++) put(c, key("nginx", i % 65536, 1 + (i >> 16)));
  assert.equal(c.size, capacity);
  c.invalidateNames(["nginx."]);
  assert.equal(c.size, 0);
});

test("a byte budget bounds the octets held: the pool makes room, and a reply over it is refused", () => {
  const c = new AnswerStore({ capacity: 1000, maxBytes: 10_000 });
  for (let i = 0; i < 50; i++) put(c, key(`n${i}`), { size: 1000 });
  assert.ok(c.bytes().used <= 10_000, `${c.bytes().used} octets held`);
  assert.ok(c.size >= 5 && c.size <= 10, `${c.size} entries`);
  assert.equal(put(c, key("huge"), { size: 20_000 }), NO_SLOT);
});

test("blocks freed in one size class are given back by compaction, and every entry survives it", () => {
  const c = new AnswerStore({ capacity: 10_000, maxBytes: 200_000 });
  // Fill small blocks, drop them, then fill big ones: the small chunks would stay reserved for good.
  for (let i = 0; i < 1000; i++) put(c, key(`s${i}`), { size: 150, tag: i & 0xff });
  c.invalidate();
  for (let i = 0; i < 400; i++) put(c, key(`b${i}`), { size: 3000, tag: i & 0xff });
  assert.ok(c.bytes().reserved <= 2 * 200_000 + 256 * 1024, `${c.bytes().reserved} octets reserved`);
  for (let i = 0; i < 400; i++) {
    const s = get(c, key(`b${i}`));
    if (s !== NO_SLOT) assert.equal(tag(c, s), i & 0xff, `b${i} intact`);
  }
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
  assert.deepEqual([r >>> 16, r & 0xffff], [3, 16]);
  const c = new AnswerStore();
  const d = new Draft();
  d.times[EXPIRES] = 10_000;
  d.rotation = r;
  const k = latin1Bytes(key("web"));
  const s = c.put(d, { ...octets(k, bytes), generation: c.generation });
  const query = Buffer.from(bytes);
  query[0] = 0x12;
  query[1] = 0x34;
  const lastOctets = () => {
    const out = Buffer.alloc(bytes.length + 8);
    assert.equal(
      replayInto(c, s, { packet: query, questionEnd, ttl: -1, adWanted: true }, out, 8),
      bytes.length,
    );
    assert.deepEqual([out[8], out[9]], [0x12, 0x34], "the client's ID");
    assert.deepEqual(
      out.subarray(8 + 2, 8 + questionEnd),
      bytes.subarray(2, questionEnd),
      "header and question",
    );
    return [0, 1, 2].map((i) => out[8 + questionEnd + i * 16 + 15]);
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
  assert.equal(rotationOf(q.bytes, q.questionEnd), 0, "a CNAME before the addresses");
  const one = reply("web.test", addrs.slice(0, 1));
  assert.equal(rotationOf(one.bytes, one.questionEnd), 0, "a single record");
  const other = reply("web.test", [addrs[0], "other.test. 5 IN A 10.0.0.9"]);
  assert.equal(rotationOf(other.bytes, other.questionEnd), 0, "records of two names");
  const moved = Uint8Array.from([9, 9, 1, 1, 2, 2, 3, 3]);
  rotateRecords(moved, 2, 3, 2, 2);
  assert.deepEqual([...moved], [9, 9, 3, 3, 1, 1, 2, 2]);
});

test("entries past their dropAt go by the sweep, though nobody asks for them again and no pool is full", () => {
  const c = new AnswerStore();
  // A churn's NXDOMAIN answers, each asked once, of 1 KiB: 8 MiB of slab.
  c.clock[0] = 0;
  for (let i = 0; i < 8000; i++) put(c, key(`gone${i}`), { expires: 5_000, dropAt: 5_000, size: 1024 });
  assert.equal(c.size, 8000);
  const full = c.bytes().reserved;
  assert.ok(full >= 8 * 1024 * 1024, `${full} octets reserved`);
  // Later, a few other names are stored, one a second: each store may run a step of the sweep.
  for (let i = 0; i < 120; i++) {
    c.clock[0] = 60_000 + i * 1000;
    put(c, key(`live${i}`), { expires: 10_000_000, dropAt: 10_000_000 });
  }
  assert.equal(c.size, 120, "only the live entries are held");
  assert.notEqual(get(c, key("live0"), 200_000), NO_SLOT);
  assert.ok(c.bytes().reserved < full / 4, `slab given back: ${c.bytes().reserved} of ${full} octets`);
});

test("passing replies are let go when their time is up, and hold a bounded share of the octets", () => {
  // 1 MiB of octets: passing replies (a big forwarded one, replayed for its client's retry) hold at
  // most a sixteenth, 64 KiB.
  const c = new AnswerStore({ maxBytes: 1024 * 1024 });
  c.clock[0] = 0;
  // Beyond the sweep's first step (2,048 slots a second): before, an expired passing reply waited for
  // the hand to come round, a minute in a store of 120k slots.
  for (let i = 0; i < 3000; i++) put(c, key(`small${i}`), { expires: 100_000 });
  const small = c.bytes().used;
  const passing = { size: 20_000, expires: 1000, flags: FLAG.passing };
  for (const k of ["p1", "p2", "p3"]) assert.notEqual(put(c, key(k), passing), NO_SLOT);
  assert.notEqual(put(c, key("p4"), passing), NO_SLOT);
  assert.equal(get(c, key("p1")), NO_SLOT, "the oldest made room: 4 x 20 KB is over 64 KiB");
  for (const k of ["p2", "p3", "p4"]) assert.notEqual(get(c, key(k)), NO_SLOT);
  assert.ok(c.bytes().used - small <= 64 * 1024, `${c.bytes().used - small} octets of passing replies`);
  assert.notEqual(put(c, key("p5"), { ...passing, size: 200 }), NO_SLOT, "a small one in the share");
  // A second later, the next store of anything lets the passing replies go.
  c.clock[0] = 2000;
  put(c, key("later"), { expires: 100_000 });
  c.clock[0] = 0;
  assert.ok(c.bytes().used - small < 1000, `${c.bytes().used - small} octets left after their time`);
  assert.equal(c.size, 3001);
});

test("a store's slots take memory when used, not when their pools are set up", () => {
  const rss = () => process.memoryUsage().rss;
  const before = rss();
  // A million slots: 85 MB of per-slot arrays, and 8 MB of bucket heads.
  const c = new AnswerStore({ capacity: 500_000 });
  c.addPool(250_000);
  c.addPool(250_000);
  const grew = (rss() - before) / 2 ** 20;
  assert.ok(grew < 20, `RSS grew ${grew.toFixed(1)} MB for an empty store`);
  put(c, key("a"), { pool: 2 });
  assert.notEqual(get(c, key("a")), NO_SLOT);
});
