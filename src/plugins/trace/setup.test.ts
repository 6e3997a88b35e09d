import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, parseTrace } from "./setup.ts";
import { everyNth } from "./trace.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors, configErrorLike } from "../../../test/helpers/config-errors.ts";
import { modulesLoaded } from "../../../test/helpers/modules-loaded.ts";

test("trace: CoreDNS's defaults, its one-argument form and its endpoint URLs", () => {
  const c = parseTrace(dir("trace"));
  assert.deepEqual(c, {
    kind: "zipkin",
    url: "http://localhost:9411/api/v2/spans",
    every: 1,
    service: "coredns",
    backlog: 1000,
    batch: 100,
    intervalMs: 1000,
  });
  assert.equal(parseTrace(dir("trace", ["tracing:9253"])).url, "http://tracing:9253/api/v2/spans");
  assert.equal(parseTrace(dir("trace", ["ZIPKIN", "tracing:9253"])).kind, "zipkin");
  const proxied = "http://tracing:9411/zipkin/api/v2/spans";
  assert.equal(parseTrace(dir("trace", [proxied])).url, proxied);
  const otlp = parseTrace(dir("trace", ["otlp", "collector:4318"]));
  assert.deepEqual([otlp.kind, otlp.url], ["otlp", "http://collector:4318/v1/traces"]);
  assert.equal(
    parseTrace(dir("trace", ["otlp", "https://c.example/v1/traces"])).url,
    "https://c.example/v1/traces",
  );
});

test("trace's block: every, service, the zipkin_* batching, client_server accepted with a line", () => {
  const ignored: string[] = [];
  const c = parseTrace(
    dir(
      "trace",
      [],
      [
        dir("every", ["100"]),
        dir("service", ["dnsproxy"]),
        dir("client_server"),
        dir("zipkin_max_backlog_size", ["50"]),
        dir("zipkin_max_batch_size", ["20"]),
        dir("zipkin_max_batch_interval", ["250ms"]),
      ],
    ),
    (opt, why) => ignored.push(`${opt.name}: ${why}`),
  );
  assert.deepEqual([c.every, c.service, c.backlog, c.batch, c.intervalMs], [100, "dnsproxy", 50, 20, 250]);
  assert.deepEqual(ignored, [
    "client_server: OpenTelemetry has no shared client/server spans: every span has an ID of its own",
  ]);
  // client_server false is no request for anything; CoreDNS's options without an argument keep the default.
  const quiet: string[] = [];
  const d = parseTrace(
    dir("trace", [], [dir("client_server", ["false"]), dir("zipkin_max_batch_size"), dir("every", ["0"])]),
    (opt) => quiet.push(opt.name),
  );
  assert.deepEqual([quiet, d.batch, d.every], [[], 100, 0]);
});

test("every N traces the Nth query, the 2Nth, ...; every 0 none", () => {
  const picks = (n: number) => {
    const t = everyNth(n);
    return Array.from({ length: 9 }, (_, i) => (t.sample() ? i + 1 : 0)).filter((x) => x > 0);
  };
  assert.deepEqual(picks(1), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(picks(3), [3, 6, 9]);
  assert.deepEqual(picks(0), []);
});

test("trace: datadog, its option and every mistake refused at its file:line", async () => {
  await assertConfigErrors(setup, [
    [
      dir("trace", ["datadog", "localhost:8126"]),
      /^Corefile:3 - .*trace: endpoint type 'datadog' is not supported: .*OTLP intake/,
    ],
    [
      dir("trace", [], [dir("datadog_analytics_rate", ["0.5"])]),
      /^Corefile:3 - .*'datadog_analytics_rate' is not supported/,
    ],
    [
      dir("trace", ["jaeger", "x:1"]),
      /^Corefile:3 - .*unknown endpoint type 'jaeger' \(want zipkin or otlp\)/,
    ],
    [dir("trace", ["a", "b", "c"]), /^Corefile:3 - .*'trace' takes 0 to 2 argument/],
    [dir("trace", ["ftp://x/spans"]), /^Corefile:3 - .*'ftp:\/\/x\/spans' is not HOST:PORT or a URL/],
    [dir("trace", ["otlp", "httpx://x/v1/traces"]), /^Corefile:3 - .*spans go over http/],
    [dir("trace", ["http://[::1"]), /^Corefile:3 - .*is not HOST:PORT or a URL/],
    [dir("trace", [], [dir("every", ["-1"])]), /^Corefile:3 - .*-1 is out of range/],
    [dir("trace", [], [dir("every")]), /^Corefile:3 - .*'every' takes 1 argument/],
    [dir("trace", [], [dir("service", ["a", "b"])]), /^Corefile:3 - .*'service' takes 1 argument/],
    [dir("trace", [], [dir("client_server", ["maybe"])]), /^Corefile:3 - .*'maybe' is not a boolean/],
    [
      dir("trace", [], [dir("zipkin_max_batch_interval", ["soon"])]),
      /^Corefile:3 - .*invalid duration 'soon'/,
    ],
    [dir("trace", [], [dir("zipkin_max_batch_interval", ["0"])]), /must be more than 0/],
    [dir("trace", [], [dir("zipkin_max_backlog_size", ["0"])]), /0 is out of range/],
    [
      dir("trace", [], [dir("zipkin_max_backlog_size", ["10"]), dir("zipkin_max_batch_size", ["20"])]),
      /^Corefile:3 - .*a batch of 20 spans cannot exceed the backlog of 10/,
    ],
    [dir("trace", [], [dir("sample_rate", ["1"])]), /^Corefile:3 - .*unknown property 'sample_rate'/],
  ]);
  // A second trace in one block.
  const { ctx } = fakeContext();
  await setup(dir("trace"), ctx);
  await assert.rejects(
    async () => setup(dir("trace", [], [], 7), ctx),
    configErrorLike(/^Corefile:7 - .*only one 'trace' per server block/),
  );
});

test("the OpenTelemetry packages are loaded only for a Corefile with trace", async () => {
  const loaded = async (corefile: string) => {
    const { resolved } = await modulesLoaded(corefile);
    const otel = resolved.map((r) => r.spec).filter((s) => s.startsWith("@opentelemetry/"));
    return [...new Set(otel)].filter((s) => s !== "@opentelemetry/api").sort();
  };
  assert.deepEqual(await loaded(". {\n  cache 30\n  whoami\n}\n"), []);
  const zipkin = await loaded(". {\n  trace 127.0.0.1:9\n  whoami\n}\n");
  assert.ok(
    zipkin.includes("@opentelemetry/sdk-trace") && zipkin.includes("@opentelemetry/exporter-zipkin"),
    String(zipkin),
  );
  assert.ok(!zipkin.includes("@opentelemetry/exporter-trace-otlp-http"), "only the exporter in use");
});
