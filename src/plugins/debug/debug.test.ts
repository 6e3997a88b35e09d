import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import dgram from "node:dgram";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { ROOT, startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { hexdump } from "../../dns/hexdump.ts";
import { pino } from "pino";
import { Writable } from "node:stream";
import { parseCorefile } from "../../corefile/parser.ts";
import { Instance } from "../../server/instance.ts";
import { plugins } from "../index.ts";

test("setup takes no argument and no block, and marks its block", async () => {
  await assertConfigErrors(setup, [
    [dir("debug", ["on"]), /^Corefile:3 - .*debug: 'debug' takes 0 argument/],
    [dir("debug", [], [dir("x")]), /'debug' takes no block/],
  ]);
  const f = fakeContext();
  assert.equal(await setup(dir("debug"), f.ctx), undefined);
  assert.equal(f.ctx.block.debug, true);
});

test("hex dump in CoreDNS's format: 16 octets a line, offsets in 6 hex digits, the length last", () => {
  const data = Uint8Array.from({ length: 18 }, (_, i) => i * 15);
  assert.equal(
    hexdump(data),
    [
      "debug: 000000 00 0f 1e 2d 3c 4b 5a 69 78 87 96 a5 b4 c3 d2 e1",
      "debug: 000010 f0 ff",
      "debug: 000012",
    ].join("\n"),
  );
});

interface Fixture {
  port: number;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
  kill(): void;
}

/** test/fixtures/debug-panic-server.ts with this Corefile: its port, log lines and exit. */
async function fixture(corefile: string): Promise<Fixture> {
  const proc = spawn(process.execPath, ["test/fixtures/debug-panic-server.ts", corefile], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(proc, "exit").then(([code]) => code as number | null);
  const lines: Record<string, unknown>[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: proc.stdout }).on("line", (l) => {
      const rec = JSON.parse(l) as Record<string, unknown>;
      lines.push(rec);
      if (typeof rec.port === "number") resolve(rec.port);
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before it answered`)));
  });
  return { port, lines, exited, kill: () => proc.kill("SIGKILL") };
}

test("without debug, a plugin's bug is answered SERVFAIL and the server goes on", async () => {
  const f = await fixture(". {\n    errors\n    boom\n}\n");
  try {
    assert.equal((await dig(f.port, "bug.example.org", "A")).status, "SERVFAIL");
    assert.equal((await dig(f.port, "bug.example.org", "A")).status, "SERVFAIL", "still answering");
  } finally {
    f.kill();
  }
});

test("with debug, an error a plugin means is still SERVFAIL, and a bug ends the process with status 2", async () => {
  const f = await fixture(". {\n    debug\n    errors\n    boom\n}\n");
  try {
    assert.equal((await dig(f.port, "error.example.org", "A")).status, "SERVFAIL");
    await dig(f.port, "bug.example.org", "A", "+time=1").catch(() => "no reply");
    const gone = await Promise.race([f.exited, sleep(10_000).then(() => "still running")]);
    assert.equal(gone, 2);
    const fatal = f.lines.find((l) => l.level === 60);
    assert.match(String((fatal?.err as { stack?: string })?.stack), /TypeError: a bug in a plugin/);
  } finally {
    f.kill();
  }
});

test("end to end: debug logs at debug level, with a hex dump of a forwarded reply that fails the checks", async () => {
  // An upstream that sends a reply with a wrong ID before the right one.
  const upstream = dgram.createSocket("udp4");
  upstream.bind(0, "127.0.0.1");
  await once(upstream, "listening");
  upstream.on("message", (q, from) => {
    const reply = Buffer.from(q);
    reply[2] |= 0x80;
    const wrong = Buffer.from(reply);
    wrong[1] ^= 1;
    upstream.send(wrong, from.port, from.address);
    upstream.send(reply, from.port, from.address);
  });
  const corefile = (debug: boolean) =>
    `. {\n${debug ? "    debug\n" : ""}    forward . 127.0.0.1:${upstream.address().port}\n}\n`;
  try {
    for (const debug of [false, true]) {
      const srv = await startServer(corefile(debug));
      try {
        assert.equal((await dig(srv.port, "www.example.com", "A")).status, "NOERROR");
        const dumps = srv.logs.filter((l) => l.level === "debug" && String(l.msg).includes("debug: 000000"));
        assert.equal(dumps.length > 0, debug, `debug ${debug}: ${dumps.length} hex dumps`);
      } finally {
        await srv.stop();
      }
    }
  } finally {
    upstream.close();
  }
});

test("the process logs at debug level while the configuration has debug, and goes back after a reload", async () => {
  const log = pino({ level: "info" }, new Writable({ write: (_c, _e, done) => done() }));
  const make = (corefile: string, previous?: Instance) =>
    Instance.create({
      blocks: parseCorefile(corefile, "Corefile"),
      root: ROOT,
      defaultPort: 0,
      log,
      plugins,
      takesOver: previous !== undefined,
      previous,
    });
  const first = await make(". {\n    debug\n    whoami\n}\n");
  assert.equal(log.level, "info", "set up, not started yet");
  await first.start();
  assert.equal(log.level, "debug");
  const second = await make(". {\n    whoami\n}\n", first);
  await second.takeOver(first, { readyWaitMs: 5000 });
  assert.equal(log.level, "info");
  await second.stop();
});
