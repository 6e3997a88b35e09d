// The journal behind IXFR: the differences between versions, the chain from a serial to the current
// version, what breaks it, and its bound; and the file zones' transferer offering it.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { RR } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { Zone } from "./zone.ts";
import { Journal, zoneDiff } from "./journal.ts";
import { ZoneSet, fileTransferer } from "./file.ts";

function zone(serial: number, lines: string[]): Zone {
  const rrs = [
    `example.org. 300 IN SOA ns.example.org. h.example.org. ${serial} 3600 600 86400 60`,
    ...lines,
  ];
  return new Zone(
    "example.org.",
    rrs.map((l) => parseRRText(l)),
  );
}

const BASE = ["example.org. 300 IN NS ns.example.org.", "ns.example.org. 300 IN A 192.0.2.53"];
const v1 = zone(1, [...BASE, "www.example.org. 300 IN A 192.0.2.1", 'old.example.org. 300 IN TXT "x"']);
const v2 = zone(2, [...BASE, "www.example.org. 300 IN A 192.0.2.2", 'old.example.org. 300 IN TXT "x"']);
const v3 = zone(3, [...BASE, "www.example.org. 60 IN A 192.0.2.2", "new.example.org. 300 IN A 192.0.2.3"]);

const text = (rrs: readonly RR[]) => rrs.map((r) => rrToText(r).replace(/\t/g, " "));

test("journal: the difference of two versions, a changed TTL as a removal and an addition", () => {
  const d = zoneDiff(v2, v3);
  assert.deepEqual(text(d.removed).sort(), [
    'old.example.org. 300 IN TXT "x"',
    "www.example.org. 300 IN A 192.0.2.2",
  ]);
  assert.deepEqual(text(d.added).sort(), [
    "new.example.org. 300 IN A 192.0.2.3",
    "www.example.org. 60 IN A 192.0.2.2",
  ]);
});

test("journal: the changes from a kept serial to the current one; none from an unknown serial", () => {
  const j = new Journal();
  j.record(v1, v2);
  j.record(v2, v3);
  assert.deepEqual(
    j.since(1, v3.soa)?.map((c) => [c.from, c.to].map((s) => (s.data as { serial: number }).serial)),
    [
      [1, 2],
      [2, 3],
    ],
  );
  assert.equal(j.since(2, v3.soa)?.length, 1);
  assert.equal(j.since(0, v3.soa), undefined);
  // A journal that does not end at the zone served (a version it never saw) answers nothing.
  assert.equal(j.since(1, v2.soa), undefined);
});

test("journal: a serial that goes back, or the same serial with other records, breaks the chain", () => {
  const j = new Journal();
  j.record(v1, v2);
  j.record(v2, zone(1, BASE));
  assert.equal(j.since(1, v1.soa), undefined);
  j.record(v1, v2);
  j.record(v2, zone(2, BASE));
  assert.equal(j.since(1, v2.soa), undefined);
  // Touched without a change: the chain holds.
  j.record(v1, v2);
  j.record(v2, zone(2, [...BASE, "www.example.org. 300 IN A 192.0.2.2", 'old.example.org. 300 IN TXT "x"']));
  assert.equal(j.since(1, v2.soa)?.length, 1);
});

test("journal: keeps the last 32 changes", () => {
  const j = new Journal();
  for (let s = 1; s <= 40; s++) j.record(zone(s, BASE), zone(s + 1, BASE));
  const last = zone(41, BASE).soa;
  assert.equal(j.since(8, last), undefined);
  assert.equal(j.since(9, last)?.length, 32);
});

test("file transferer: offers the journal's changes after a reload, and none for a serial it lacks", () => {
  const set = new ZoneSet([v1]);
  const t = fileTransferer(set);
  assert.equal(t.transfer("example.org.") && "changes" in t.transfer("example.org.")!, true);
  set.replace([v2]);
  set.replace([v3]);
  const offer = t.transfer("example.org.");
  assert.ok(offer !== undefined && !("unavailable" in offer));
  assert.equal(offer.changes?.(1)?.length, 2);
  assert.equal(offer.changes?.(3), undefined);
  // A zone dropped from the set (auto) forgets its history.
  set.replace([]);
  set.replace([v3]);
  assert.equal((t.transfer("example.org.") as { changes(s: number): unknown }).changes(2), undefined);
});
