// rrl with -workers 2: one client address asks the same question from many source ports, which the
// kernel spreads over both threads' sockets (the per-thread counts in /metrics show it). The threads
// share one set of accounts, so the client gets about responses-per-second answers in all, not that
// many from each thread. A reload that keeps the rrl block keeps the accounts (a client limited before
// it is still limited after); a changed block starts fresh ones.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import { exchangeUdp } from "./helpers/udp-exchange.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Type } from "../src/dns/constants.ts";
import { queryMsg } from "./helpers/query-msg.ts";

const RATE = 10;

const corefile = (metrics: number, rate: number) => `example.org {
    prometheus 127.0.0.1:${metrics}
    rrl {
        responses-per-second ${rate}
        ipv4-prefix-length 32
    }
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 10.0.0.1"
    }
}
`;

/** `n` identical queries, one every `gapMs`, each from a socket of its own (a new source port), each
 * waiting 1 s at most for its reply: how many came back answered, truncated (slipped), or not at all. */
async function flood(port: number, n: number, gapMs: number) {
  const query = encode(queryMsg("www.example.org.", Type.A));
  const replies = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await sleep(i * gapMs);
      return exchangeUdp(port, query, 1000);
    }),
  );
  const out = { answered: 0, truncated: 0, none: 0 };
  for (const r of replies) {
    const m = r && decode(r);
    if (m === undefined) out.none++;
    else if (m.tc) out.truncated++;
    else if (m.answer.length > 0) out.answered++;
  }
  return out;
}

describe("rrl with -workers 2", () => {
  let srv: RunningServer;
  let metricsPort = 0;
  const metrics = async () => (await httpGet(metricsPort, "/metrics")).body;
  /** Sends SIGUSR1 with the Corefile for `rate` and waits for the main thread's "reloaded" (logged
   * once every worker has taken the new configuration over too). */
  const reload = async (rate: number) => {
    const before = srv.logs.filter((l) => l.msg === "reloaded" && l.worker === undefined).length;
    writeFileSync(join(srv.dir, "Corefile"), corefile(metricsPort, rate));
    srv.proc.kill("SIGUSR1");
    const end = Date.now() + 10_000;
    while (srv.logs.filter((l) => l.msg === "reloaded" && l.worker === undefined).length === before) {
      assert.ok(Date.now() < end, "reloaded in 10 s");
      await sleep(10);
    }
  };

  before(async () => {
    metricsPort = await freePort();
    srv = await startServer(corefile(metricsPort, RATE), { args: ["-workers", "2"] });
  });
  after(async () => {
    await srv?.stop("SIGKILL");
  });

  it("a client on many source ports gets responses-per-second answers from both threads together", async () => {
    // 300 queries in 1.5 s: far over the allowance, so after the first second's credit every reply is
    // over the limit (each one still pays, BIND's way): about RATE answered in all; RATE per thread
    // (about twice RATE) if each thread kept accounts of its own.
    const got = await flood(srv.port, 300, 5);
    const text = await metrics();
    const threads = [0, 1].map(
      (w) => sample(text, "clusterdns_worker_queries_total", { worker: String(w) }) ?? 0,
    );
    assert.ok(
      threads.every((n) => n >= 50),
      `both threads took queries: ${threads.join(", ")}`,
    );
    assert.ok(got.answered >= RATE - 2 && got.answered <= RATE + 4, `answered ${JSON.stringify(got)}`);
    assert.ok(got.truncated > 100, `every other one over the limit slipped: ${JSON.stringify(got)}`);
    const limited =
      (sample(text, "clusterdns_rrl_responses_total", { action: "dropped" }) ?? 0) +
      (sample(text, "clusterdns_rrl_responses_total", { action: "slipped" }) ?? 0);
    assert.equal(limited, 300 - got.answered, "the threads' counts add up to the responses held back");
    assert.equal(sample(text, "clusterdns_rrl_accounts"), 1, "one account, in one table");
  });

  it("a reload that keeps the rrl block keeps the accounts; a changed block starts fresh", async () => {
    await reload(RATE);
    // The flood's debt (window 15 s) is still owed: nothing answered.
    assert.equal((await flood(srv.port, 30, 5)).answered, 0, "still limited after the reload");
    await reload(RATE + 2);
    const fresh = await flood(srv.port, 100, 5);
    assert.ok(
      fresh.answered >= RATE + 1 && fresh.answered <= RATE + 5,
      `a fresh account, shared: ${JSON.stringify(fresh)}`,
    );
  });
});
