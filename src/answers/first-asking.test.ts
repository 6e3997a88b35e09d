// A question's first asking with an NXDOMAIN answer is answered but not filed (doorkeeper.ts): random
// names, which no cache absorbs, then evict nothing. Its reply must be the one a filed answer would
// have given (ID, flags, the client's spelling, cache's TTLs), the second asking files it, and an
// answer that exists is filed at once, as before.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readyInstance } from "../../test/helpers/instance.ts";
import { lanePeer as peer, laneObjects as objects } from "../../test/k8s/lane-cluster.ts";
import { encode } from "../dns/encode.ts";
import { decode } from "../dns/decode.ts";
import { newQuery } from "../dns/message.ts";
import { Rcode, Type } from "../dns/constants.ts";
import { Doorkeeper } from "./doorkeeper.ts";

test("the doorkeeper says no to a key's first sight and yes to every later one until it is cleared", () => {
  const door = new Doorkeeper();
  // Well-spread 32-bit hashes, as the store's are; 100,000 keys: fewer than a clearing takes.
  const hashes = Array.from({ length: 100_000 }, (_, i) => Math.imul(i + 1, 0x9e3779b1) | 0);
  const first = hashes.filter((h) => door.admits(h)).length;
  // A few are taken for seen because others set both their bits (the table's false positives).
  assert.ok(first < hashes.length * 0.05, `${first} of ${hashes.length} admitted at first sight`);
  assert.equal(hashes.filter((h) => !door.admits(h)).length, 0, "every key is admitted at its second sight");
  // Past a clearing (1 << 17 keys marked), what was seen before is forgotten.
  for (let i = 0; i < 1 << 17; i++) door.admits(Math.imul(i + 7_000_000, 0x85ebca6b) ^ 0x5bd1e995);
  const remembered = hashes.slice(0, 1000).filter((h) => door.admits(h)).length;
  assert.ok(remembered < 100, `${remembered} of 1,000 still admitted after the clearing`);
});

test("an NXDOMAIN is answered at its first asking as it is replayed later, and filed at its second", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-first-asking-"));
  writeFileSync(join(dir, "objects.json"), JSON.stringify({ kind: "List", items: objects }));
  const inst = await readyInstance(
    `. {
    kubernetes cluster.local {
        objects objects.json
        ttl 30
    }
    cache 30 {
        denial 9984 7
    }
}
`,
    dir,
  );
  t.after(() => inst.stop());
  const pipeline = inst.pipelines[0];
  const store = pipeline.answers.store;
  const ask = async (name: string, type: number, id: number) => {
    const q = newQuery(name, type, 1, id);
    q.edns = { udpSize: 1232, version: 0, do: false, options: [] };
    const out = await pipeline.handle(encode(q), peer);
    assert.ok(out, `${name}: a reply`);
    return Buffer.from(out);
  };

  const missing = "NoSuch-Thing.Default.svc.Cluster.Local.";
  const held = store.size;
  const first = await ask(missing, Type.A, 4242);
  assert.equal(store.size, held, "the first asking files nothing");
  const m = decode(first);
  assert.equal(m.id, 4242);
  assert.equal(m.rcode, Rcode.NXDOMAIN);
  assert.equal(m.question[0].name, missing, "the client's spelling");
  assert.equal(m.aa, true);
  assert.deepEqual(
    m.authority.map((rr) => [rr.type, rr.ttl]),
    [[Type.SOA, 7]],
    "the SOA with the TTL cache gives a denial (CoreDNS caps the reply it stores)",
  );
  const second = await ask(missing, Type.A, 4242);
  assert.ok(store.size > held, "the second asking files it");
  assert.deepEqual(second, first, "the same octets, filed or not");
  const third = await ask(missing, Type.A, 4242);
  assert.deepEqual(third, first, "and replayed");

  // A name that exists is filed at its first asking.
  const before = store.size;
  assert.equal(decode(await ask("nginx.default.svc.cluster.local.", Type.A, 7)).rcode, Rcode.NOERROR);
  assert.ok(store.size > before, "an answer that exists is filed at once");
});
