import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { setup } from "./setup.ts";
import { SplitError, splitWords } from "./split.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";

test("a command's words are split as CoreDNS splits them (shell words, no expansion)", () => {
  assert.deepEqual(splitWords("touch  /tmp/a\t/tmp/b"), ["touch", "/tmp/a", "/tmp/b"]);
  assert.deepEqual(splitWords("/bin/sh -c 'echo $HOME > /tmp/x'"), ["/bin/sh", "-c", "echo $HOME > /tmp/x"]);
  assert.deepEqual(splitWords('say "a \\"quoted\\" word"'), ["say", 'a "quoted" word']);
  assert.deepEqual(splitWords("a\\ b c'd'e"), ["a b", "cde"]);
  assert.deepEqual(splitWords("run # the rest is a comment"), ["run"]);
  assert.deepEqual(splitWords("x#y"), ["x#y"]);
  assert.throws(() => splitWords("sh -c 'open"), SplitError);
  assert.throws(() => splitWords("end\\"), SplitError);
});

test("setup refuses a bad event or command at its line", async () => {
  await assertConfigErrors(setup, [
    [dir("on", ["startup"]), /^Corefile:3 - .*on: 'on' takes at least 2 argument/],
    [dir("on", ["reload", "touch", "/tmp/x"]), /^Corefile:3 - .*on: unknown event 'reload'/],
    [
      dir("on", ["startup", "sh", "-c", "'unclosed"]),
      /error parsing command: EOF found when expecting closing quote/,
    ],
    [dir("on", ["startup", "&"]), /no command to run/],
    [dir("on", ["startup", "true"], [dir("x")]), /takes no block/],
  ]);
});

test("events are read in any case; certrenew, which never fires, is accepted with a warning", async () => {
  const f = fakeContext();
  assert.equal(await setup(dir("on", ["StartUp", "true"]), f.ctx), undefined);
  assert.equal(f.serving.length, 1);
  await setup(dir("on", ["SHUTDOWN", "true"]), f.ctx);
  assert.equal(f.stopping.length, 1);
  await setup(dir("on", ["certrenew", "true"]), f.ctx);
  assert.match(f.logs.at(-1)!.msg, /'certrenew' never happens here/);
  assert.equal(f.serving.length + f.stopping.length, 2);
});

/** Files in `dir` whose names start with `prefix`. */
const count = (d: string, prefix: string) => readdirSync(d).filter((n) => n.startsWith(prefix)).length;

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await sleep(50);
  assert.ok(ok(), what);
}

test("end to end: commands run at start-up, again after a reload, and at SIGTERM; failures are logged, not fatal", async () => {
  const marks = mkdtempSync(join(tmpdir(), "clusterdns-on-"));
  // mktemp makes a new file each time it runs: the files count the runs.
  const corefile = [
    ". {",
    `    on startup mktemp -p ${marks} startup.XXXXXX`,
    `    on shutdown mktemp -p ${marks} shutdown.XXXXXX`,
    `    on startup /bin/sh -c "'echo hello-from-on; echo to-stderr >&2; exit 3'"`,
    "    on startup /nonexistent/program",
    "    whoami",
    "}",
    "",
  ].join("\n");
  const srv = await startServer(corefile);
  try {
    await until("the start-up command ran", () => count(marks, "startup.") === 1);
    await until("the failing commands were logged", () =>
      srv.logs.some((l) => l.msg === "command could not start"),
    );
    const msgs = srv.logs
      .filter((l) => l.plugin === "on")
      .map((l) => `${String(l.stream ?? "")} ${String(l.msg)}`);
    assert.ok(msgs.includes("stdout hello-from-on"), msgs.join("\n"));
    assert.ok(msgs.includes("stderr to-stderr"), msgs.join("\n"));
    assert.ok(msgs.includes(" command failed: exit status 3"), msgs.join("\n"));
    assert.equal((await dig(srv.port, "example.org", "A")).status, "NOERROR", "still serving");

    // A reload: the new configuration's start-up commands run, no shutdown command does.
    const file = join(srv.dir, "Corefile");
    writeFileSync(file, readFileSync(file, "utf8") + "# changed\n");
    srv.proc.kill("SIGUSR1");
    await until("the start-up command ran again after the reload", () => count(marks, "startup.") === 2);
    assert.equal(count(marks, "shutdown."), 0);

    assert.equal(await srv.stop("SIGTERM"), 0);
    assert.equal(count(marks, "shutdown."), 1, "the shutdown command ran before the process exited");
    assert.equal(count(marks, "startup."), 2);
  } finally {
    await srv.stop();
    rmSync(marks, { recursive: true, force: true });
  }
});
