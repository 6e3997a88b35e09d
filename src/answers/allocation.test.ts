// What the data plane allocates, measured as V8 reports it (the growth of the used heap between
// collections): a replayed answer allocates nothing, with the prometheus hook counting it, and a lane
// answer little. Not a timing: the figure is the same on a busy machine, once V8 has optimized the
// code (the rounds before the measured one warm it; the best of three rounds is taken, so a round
// that ran before an optimization finished does not count).

import { test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { Pipeline } from "../server/pipeline.ts";
import type { Block } from "../server/block.ts";
import { encode } from "../dns/encode.ts";
import { newQuery, replyTo } from "../dns/message.ts";
import { Rcode, Type } from "../dns/constants.ts";
import { LaneResult } from "./lane-step.ts";
import type { Handler } from "../chain/handler.ts";
import { queryRecorder } from "../metrics/query-stats.ts";
import { bytesPerCall } from "../../test/helpers/bytes-per-call.ts";

/** A block whose one handler answers an A record (in the lane and in the chain alike). */
function pipeline(): Pipeline {
  const p = new Pipeline("dns://:53", pino({ level: "silent" }));
  const record = (name: string) => ({
    name,
    type: Type.A,
    class: 1,
    ttl: 30,
    data: { type: Type.A, address: "10.0.0.1" } as const,
  });
  const handler: Handler = {
    name: "answer",
    lane: {
      kind: "answer",
      answer(q, out) {
        out.msg.rcode = Rcode.NOERROR;
        out.msg.answer = [record(q.qname)];
        out.stable = true;
        out.plugin = "answer";
        return LaneResult.answered;
      },
    },
    serve(req) {
      req.cache.stable = true;
      const r = replyTo(req.msg);
      r.answer.push(record(req.qname));
      return Promise.resolve(r);
    },
  };
  const block: Block = {
    keys: [],
    zones: ["."],
    chain: handler,
    lane: [handler.lane],
    hooks: [queryRecorder()],
    bind: [],
    directives: ["answer"],
    shared: new Map(),
  };
  p.mux.add(".", block);
  return p;
}

const peer = {
  proto: "udp" as const,
  remoteAddress: "10.1.2.3",
  remotePort: 5353,
  localAddress: "",
  localPort: 53,
};

test("a replayed answer allocates nothing (engine's output buffer, prometheus counting)", () => {
  const p = pipeline();
  const query = encode(newQuery("www.example.org.", Type.A, 1, 7));
  const out = Buffer.alloc(2048);
  assert.ok((p.handleInto(query, query.length, peer, out, 0) as number) > 0, "answered in the lane");
  const bytes = bytesPerCall(() => void p.handleInto(query, query.length, peer, out, 0), 200_000);
  assert.ok(bytes < 1, `${bytes.toFixed(2)} bytes per replayed answer`);
});

test("a lane answer (a name asked once) allocates a few hundred bytes at most", () => {
  const p = pipeline();
  const queries = Array.from({ length: 100_000 }, (_, i) =>
    encode(newQuery(`n${i}.example.org.`, Type.A, 1, i & 0xffff)),
  );
  const out = Buffer.alloc(2048);
  let k = 0;
  const bytes = bytesPerCall(() => {
    const q = queries[k++ % queries.length];
    const n = p.handleInto(q, q.length, peer, out, 0);
    assert.equal(typeof n, "number", "answered in the lane, not through the chain");
  }, 20_000);
  assert.ok(bytes < 400, `${bytes.toFixed(0)} bytes per lane answer`);
});
