// The wire lane is an optimisation, never a second set of rules: every question a cluster gets is
// answered the same through it as through the plugin chain. Two instances serve one cluster from the
// same objects file with kubeadm's whole Corefile; in one the lane is switched off. Each question is
// asked of both, three times (a miss, then replays, then after `cache` dropped its copy and refilled
// it from the source), and the decoded replies must be equal (address order aside: loadbalance).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Instance } from "../server/instance.ts";
import { readyInstance } from "../../test/helpers/instance.ts";
import { encode } from "../dns/encode.ts";
import { decode } from "../dns/decode.ts";
import { newQuery, type Msg, type RR } from "../dns/message.ts";
import {
  lanePeer as peer,
  laneNames as names,
  laneObjects as objects,
  laneTypes as types,
} from "../../test/k8s/lane-cluster.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";

async function start(dir: string, lane: boolean): Promise<Instance> {
  const corefile = `. {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects objects.json
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30 {
        success 8
        denial 8
    }
    loop
    loadbalance
}
`;
  const inst = await readyInstance(corefile, dir);
  if (!lane) inst.pipelines[0].mux.match(".")!.value.lane = undefined;
  return inst;
}

/** A reply with each section's records sorted (loadbalance orders them at random), SOA serials (the
 * time of each instance's own last change) and TTLs left out: ttls() compares those. */
function canonical(m: Msg): object {
  const text = (rr: RR) =>
    JSON.stringify({ ...rr, ttl: 0, data: "serial" in rr.data ? { ...rr.data, serial: 0 } : rr.data });
  const sorted = (rrs: RR[]) => rrs.map(text).sort();
  return {
    ...m,
    id: 0,
    answer: sorted(m.answer),
    authority: sorted(m.authority),
    additional: sorted(m.additional),
  };
}

/** Every TTL of the reply, sorted: the two instances answer a moment apart, so they may differ by one. */
const ttls = (m: Msg) => [...m.answer, ...m.authority, ...m.additional].map((rr) => rr.ttl).sort();

test("every question gets the same reply through the wire lane as through the chain", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-lane-"));
  writeFileSync(join(dir, "objects.json"), JSON.stringify({ kind: "List", items: objects }));
  const withLane = await start(dir, true);
  const chainOnly = await start(dir, false);
  t.after(async () => {
    await withLane.stop();
    await chainOnly.stop();
  });
  const ask = async (inst: Instance, name: string, type: number, edns: boolean) => {
    const q = newQuery(`${name}.`, type, 1, 99);
    if (edns) q.edns = { udpSize: 1232, version: 0, do: true, options: [] };
    const out = await inst.pipelines[0].handle(encode(q), peer);
    assert.ok(out, `${name} ${type}: a reply`);
    return decode(out);
  };
  const before = { ...answerCacheStats };
  let compared = 0;
  // Three rounds: the small cache (8 of each kind) has dropped most of round one's copies by round
  // two, so round two refills from the sources; round three replays what round two filed.
  for (let round = 0; round < 3; round++) {
    for (const name of names) {
      for (const type of types) {
        for (const edns of [false, true]) {
          const a = await ask(withLane, name, type, edns);
          const b = await ask(chainOnly, name, type, edns);
          const what = `round ${round}: ${name} ${type} edns=${edns}`;
          assert.deepEqual(canonical(a), canonical(b), what);
          const [ta, tb] = [ttls(a), ttls(b)];
          assert.ok(
            ta.length === tb.length && ta.every((ttl, i) => Math.abs(ttl - tb[i]) <= 1),
            `${what}: TTLs ${ta.join(",")} and ${tb.join(",")}`,
          );
          compared++;
        }
      }
    }
  }
  assert.equal(compared, 3 * names.length * types.length * 2);
  // What the lane did itself (the chain-only instance adds nothing to these).
  const lane = answerCacheStats.lane - before.lane;
  const refills = answerCacheStats.refills - before.refills;
  assert.ok(lane > 500, `${lane} answered in the lane`);
  assert.ok(refills > 100, `${refills} refilled from sources`);
});
