import { test } from "node:test";
import assert from "node:assert/strict";
import type { Directive } from "../../corefile/types.ts";
import type { Handler } from "../../chain/handler.ts";
import { PluginError } from "../../chain/plugin-error.ts";
import { ExchangeCode, ExchangeError } from "../forward/conn.ts";
import { replyTo } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { goDuration } from "./consolidate.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext, type LogLine } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { Rcode, Type } from "../../dns/constants.ts";

/** A next handler that throws `err` for every query. */
function throwing(err: unknown): Handler {
  return {
    name: "thrower",
    serve: () => Promise.reject(err),
  };
}

async function build(d: Directive, next: Handler) {
  const f = fakeContext();
  const plugin = await setup(d, f.ctx);
  assert.ok(plugin);
  return { ...f, h: plugin(next) };
}

const errorLines = (logs: LogLine[]) => logs.filter((l) => l.level === 50);

test("a throwing handler is answered SERVFAIL and logged once with the query", async () => {
  const { h, logs } = await build(dir("errors"), throwing(new Error("boom")));
  const m = await h.serve(makeRequest("Example.org", Type.AAAA));
  assert.equal(m.rcode, Rcode.SERVFAIL);
  const lines = errorLines(logs);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, "2 example.org. AAAA: boom");
  assert.equal(lines[0].qname, "example.org.");
  assert.equal(lines[0].qtype, "AAAA");
  assert.equal(lines[0].plugin, "errors");
  assert.equal(lines[0].err, undefined, "no stack without stacktrace");
});

test("replies pass through untouched; a PluginError names the plugin that failed", async () => {
  const next = recordingNext(Rcode.NXDOMAIN);
  const ok = await build(dir("errors"), next);
  assert.equal((await ok.h.serve(makeRequest("a.test", Type.A))).rcode, Rcode.NXDOMAIN);
  assert.equal(next.calls.length, 1);
  assert.equal(errorLines(ok.logs).length, 0);

  const failing = await build(
    dir("errors"),
    throwing(new PluginError("forward", "CDNS_ERR_NO_UPSTREAM", "no upstream")),
  );
  const req = makeRequest("a.test", Type.A);
  assert.equal((await failing.h.serve(req)).rcode, Rcode.SERVFAIL);
  assert.equal(req.answeredBy, "forward");
  assert.equal(errorLines(failing.logs)[0].code, "CDNS_ERR_NO_UPSTREAM");
  assert.equal(errorLines(failing.logs)[0].msg, "2 a.test. A: forward: no upstream");
});

test("a SERVFAIL that carries its error is logged and sent as it came; any other reply is not", async () => {
  const failed = replyTo(makeRequest("a.test", Type.A).msg, Rcode.SERVFAIL);
  failed.error = new ExchangeError(ExchangeCode.TIMEOUT, "read udp 10.0.0.1:4000->10.0.0.2:53: i/o timeout");
  const answered = { ...replyTo(makeRequest("b.test", Type.A).msg, Rcode.NOERROR), error: new Error("x") };
  let reply = failed;
  const next: Handler = { name: "forward", serve: () => Promise.resolve(reply) };
  const { h, logs } = await build(dir("errors"), next);
  assert.equal(await h.serve(makeRequest("a.test", Type.A)), failed, "the same reply, untouched");
  reply = answered;
  assert.equal(await h.serve(makeRequest("b.test", Type.A)), answered);
  assert.deepEqual(
    errorLines(logs).map((l) => [l.msg, l.code]),
    [["2 a.test. A: read udp 10.0.0.1:4000->10.0.0.2:53: i/o timeout", "CDNS_ERR_FORWARD_TIMEOUT"]],
  );
});

test("stacktrace logs the error with its stack", async () => {
  const { h, logs } = await build(dir("errors", [], [dir("stacktrace")]), throwing(new Error("deep")));
  await h.serve(makeRequest("a.test", Type.A));
  const err = errorLines(logs)[0].err as { stack: string };
  assert.match(err.stack, /Error: deep\n\s+at /);
});

test("consolidate counts matching errors and writes one line per period", async () => {
  let message = "read udp 10.0.0.1:53: i/o timeout";
  const next: Handler = { name: "t", serve: () => Promise.reject(new Error(message)) };
  const d = dir("errors", [], [dir("consolidate", ["20ms", "i/o timeout$", "warning"])]);
  const { h, logs, stop } = await build(d, next);
  for (let i = 0; i < 3; i++)
    assert.equal((await h.serve(makeRequest("a.test", Type.A))).rcode, Rcode.SERVFAIL);
  message = "something else";
  await h.serve(makeRequest("b.test", Type.A));
  const individual = errorLines(logs);
  assert.equal(individual.length, 1, "only the non-matching error is logged on its own");
  assert.equal(individual[0].msg, "2 b.test. A: something else");

  let summary: LogLine | undefined;
  for (let i = 0; i < 500 && !summary; i++) {
    await new Promise((r) => setTimeout(r, 10));
    summary = logs.find((l) => l.level === 40);
  }
  assert.ok(summary, "the summary line was written");
  assert.equal(summary.msg, "3 errors like 'i/o timeout$' occurred in last 20ms");
  await stop();
});

test("stop flushes pending counts; after stop errors are logged one by one", async () => {
  const d = dir("errors", [], [dir("consolidate", ["1h", "(?i)^BOOM"])]);
  const { h, logs, stop } = await build(d, throwing(new Error("boom here")));
  await h.serve(makeRequest("a.test", Type.A));
  await h.serve(makeRequest("a.test", Type.A));
  assert.equal(errorLines(logs).length, 0);
  await stop();
  assert.deepEqual(
    errorLines(logs).map((l) => l.msg),
    ["2 errors like '(?i)^BOOM' occurred in last 1h0m0s"],
  );
  await h.serve(makeRequest("a.test", Type.A));
  assert.equal(errorLines(logs).length, 2);
});

test("goDuration prints like Go's time.Duration", () => {
  assert.equal(goDuration(30_000), "30s");
  assert.equal(goDuration(300_000), "5m0s");
  assert.equal(goDuration(90_000), "1m30s");
  assert.equal(goDuration(5_400_000), "1h30m0s");
  assert.equal(goDuration(1500), "1.5s");
  assert.equal(goDuration(250), "250ms");
  assert.equal(goDuration(0.5), "500µs");
  assert.equal(goDuration(0), "0s");
});

test("setup errors name file:line", async () => {
  const bad: [Directive, RegExp][] = [
    [dir("errors", ["/var/log/x"], undefined, 2), /^Corefile:2 - .*errors: invalid log file/],
    [dir("errors", ["stdout", "x"], undefined, 3), /^Corefile:3 - .*takes 0 to 1/],
    [
      dir("errors", [], [dir("consolidate", ["5m"], undefined, 4)]),
      /^Corefile:4 - .*'consolidate' takes 2 to 4/,
    ],
    [dir("errors", [], [dir("consolidate", ["5x", "a"], undefined, 5)]), /^Corefile:5 - .*invalid duration/],
    [
      dir("errors", [], [dir("consolidate", ["5m", "(", "error"], undefined, 6)]),
      /^Corefile:6 - .*invalid regular/,
    ],
    [
      dir("errors", [], [dir("consolidate", ["5m", "a", "fatal"], undefined, 7)]),
      /^Corefile:7 - .*unknown log level/,
    ],
    [dir("errors", [], [dir("consolidate", ["0", "a"], undefined, 8)]), /^Corefile:8 - .*must be positive/],
    [dir("errors", [], [dir("stacktrace", ["yes"], undefined, 9)]), /^Corefile:9 - .*'stacktrace' takes 0/],
    [dir("errors", [], [dir("log", [], undefined, 10)]), /^Corefile:10 - .*unknown property 'log'/],
    [
      dir("errors", [], [dir("consolidate", ["5m", "a", "show_first", "info"], undefined, 11)]),
      /^Corefile:11 - .*log level must come before show_first/,
    ],
    [
      dir("errors", [], [dir("consolidate", ["5m", "a", "info", "debug"], undefined, 12)]),
      /^Corefile:12 - .*multiple log levels/,
    ],
  ];
  await assertConfigErrors(setup, bad);
  // A second errors line in a block is refused before setup (corefile/check.ts, check.test.ts).
});
