import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { parseErratic, setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig, digTransfer, parseDig, type DigResult } from "../../../test/helpers/dig.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const run = promisify(execFile);

/** dig with a 1 s wait and no retry: its result, or "no reply" when nothing came (dig exits 9). */
async function ask(
  port: number,
  name: string,
  type: string,
  ...opts: string[]
): Promise<DigResult | "no reply"> {
  const args = ["@127.0.0.1", "-p", String(port), name, type, "+tries=1", "+time=1", "+nocookie", ...opts];
  try {
    return parseDig((await run("dig", args, { timeout: 15_000 })).stdout);
  } catch (err) {
    if ((err as { code?: unknown }).code === 9) return "no reply";
    throw err;
  }
}

test("options: CoreDNS's defaults, and naming truncate or delay alone turns the default drop off", () => {
  const opts = (...lines: [string, string[]][]) =>
    parseErratic(
      dir(
        "erratic",
        [],
        lines.map(([n, a]) => dir(n, a)),
      ),
    );
  assert.deepEqual(opts(), { drop: 2, truncate: 0, delay: 0, delayMs: 100, large: false });
  assert.deepEqual(opts(["drop", ["3"]]), { drop: 3, truncate: 0, delay: 0, delayMs: 100, large: false });
  assert.equal(opts(["delay", []]).drop, 0);
  assert.deepEqual(opts(["delay", ["3", "50ms"]]), {
    drop: 0,
    truncate: 0,
    delay: 3,
    delayMs: 50,
    large: false,
  });
  assert.deepEqual(opts(["truncate", ["5"]]), { drop: 0, truncate: 5, delay: 0, delayMs: 100, large: false });
  assert.deepEqual(opts(["drop", []], ["truncate", []]), {
    drop: 2,
    truncate: 2,
    delay: 0,
    delayMs: 100,
    large: false,
  });
  assert.equal(opts(["drop", ["0"]]).drop, 0);
  assert.equal(opts(["large", []]).large, true);
});

test("setup refuses what CoreDNS refuses, at its line", async () => {
  await assertConfigErrors(setup, [
    [dir("erratic", ["3"]), /^Corefile:3 - .*erratic: 'erratic' takes 0 argument/],
    [dir("erratic", [], [dir("drop", ["-1"], undefined, 4)]), /^Corefile:4 - .*erratic: -1 is out of range/],
    [dir("erratic", [], [dir("drop", ["x"])]), /'x' is not an integer/],
    [dir("erratic", [], [dir("drop", ["1", "2"])]), /takes 0 to 1 argument/],
    [dir("erratic", [], [dir("delay", ["2", "soon"])]), /invalid duration 'soon'/],
    [dir("erratic", [], [dir("delay", ["1", "2s", "3"])]), /takes 0 to 2 argument/],
    [dir("erratic", [], [dir("often", [], undefined, 5)]), /^Corefile:5 - .*unknown property 'often'/],
  ]);
});

test("one counter: query 0, N, 2N... meet each fault; replies are private and never pass on", async () => {
  const f = fakeContext();
  const plugin = await setup(dir("erratic", [], [dir("drop", ["3"]), dir("truncate", ["2"])]), f.ctx);
  const next = recordingNext();
  const h = plugin!(next);
  const seen: string[] = [];
  for (let i = 0; i < 6; i++) {
    const req = makeRequest("a.example.org", Type.A);
    const m = await h.serve(req);
    assert.equal(req.cache.private, true);
    seen.push(req.noReply ? "drop" : m.tc ? "tc" : "ok");
  }
  assert.deepEqual(seen, ["drop", "ok", "tc", "drop", "tc", "ok"]);
  assert.equal(next.calls.length, 0);
  assert.ok(f.ready(), "ready at once");
});

test("A, AAAA and AXFR are answered, other types SERVFAIL", async () => {
  const plugin = await setup(dir("erratic", [], [dir("drop", ["0"])]), fakeContext().ctx);
  const h = plugin!(recordingNext());
  const a = await h.serve(makeRequest("x.example.org", Type.A));
  assert.deepEqual(
    [a.aa, a.answer[0].ttl, a.answer[0].data],
    [true, 0, { type: Type.A, address: "192.0.2.53" }],
  );
  const aaaa = await h.serve(makeRequest("x.example.org", Type.AAAA));
  assert.deepEqual(aaaa.answer[0].data, { type: Type.AAAA, address: "2001:db8::53" });
  assert.equal((await h.serve(makeRequest("x.example.org", Type.MX))).rcode, Rcode.SERVFAIL);
});

test("a delay ends at the query's deadline (cancel)", async () => {
  const plugin = await setup(dir("erratic", [], [dir("delay", ["1", "1h"])]), fakeContext().ctx);
  const h = plugin!(recordingNext());
  const req = makeRequest("x.example.org", Type.A);
  req.deadline = Date.now() + 50;
  const m = await h.serve(req);
  assert.equal(m.answer.length, 1, "answered once the deadline came, not after an hour");
});

test("end to end with dig: drops, truncation and delays happen on every pass, `cache` in the block or not", async () => {
  const corefile = [
    "drop.test {\n    cache 30\n    erratic {\n        drop 2\n    }\n}",
    "tc.test {\n    cache 30\n    erratic {\n        truncate 2\n    }\n}",
    "slow.test {\n    erratic {\n        delay 2 400ms\n    }\n}",
    "zone.test {\n    erratic {\n        drop 0\n    }\n}",
  ].join("\n");
  const srv = await startServer(corefile);
  try {
    // The same name each time: a stored reply would answer the dropped ones.
    const drops: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await ask(srv.port, "www.drop.test", "A");
      drops.push(r === "no reply" ? r : `${r.status} ${r.answer.join(" ")}`);
    }
    const answered = "NOERROR www.drop.test. 0 IN A 192.0.2.53";
    assert.deepEqual(drops, ["no reply", answered, "no reply", answered]);

    const tcs: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await ask(srv.port, "www.tc.test", "AAAA", "+ignore");
      assert.notEqual(r, "no reply");
      tcs.push((r as DigResult).flags.includes("tc"));
    }
    assert.deepEqual(tcs, [true, false, true, false]);

    const took: number[] = [];
    for (let i = 0; i < 2; i++) {
      const start = performance.now();
      const r = await dig(srv.port, "www.slow.test", "A");
      took.push(performance.now() - start);
      assert.equal(r.answer.length, 1);
    }
    assert.ok(took[0] >= 390, `the first query waited the delay (${took[0].toFixed(0)} ms)`);

    assert.equal((await dig(srv.port, "www.zone.test", "TXT")).status, "SERVFAIL");
    const xfr = await digTransfer(srv.port, "zone.test");
    assert.equal(xfr.failed, false);
    assert.deepEqual(
      xfr.records.map((r) => r.split(" ").slice(3, 4)[0]),
      ["SOA", "NS", "NS", "AAAA", "AAAA", "SOA"],
    );
  } finally {
    await srv.stop();
  }
});
