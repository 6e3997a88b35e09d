// The README's Quick start prints exactly what it shows: every `$ ` command of its transcript is run,
// as written, against the built-in demo, and its output compared byte for byte. Only the ports move:
// the demo's DNS port, health and ready go to free ports here (a test never takes fixed ports), and
// so does the source port whoami reports.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_COREFILE } from "../src/default-corefile.ts";
import { startServer, ROOT } from "./helpers/server.ts";
import { freePort } from "./helpers/free-port.ts";

const run = promisify(execFile);

interface Step {
  command: string;
  output: string;
}

/** The `$ command` lines of the Quick start's transcript, each with the lines it prints. */
function transcript(): Step[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)?.[1];
  assert.ok(section, "the README has a Quick start");
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .find((b) => b.startsWith("$ "));
  assert.ok(block, "a transcript: lines that start with `$ `, each followed by its output");
  const steps: Step[] = [];
  for (const line of block.split("\n").slice(0, -1)) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), output: "" });
    else steps.at(-1)!.output += `${line}\n`;
  }
  return steps;
}

test("every Quick start command prints exactly what the README shows", async (t) => {
  const steps = transcript();
  assert.ok(steps.length >= 10, "the demo's records are shown");
  const [health, ready, source] = [await freePort(), await freePort(), await freePort()];
  // The demo, as ./dev start runs it, with its ports moved and its files found from anywhere.
  const corefile = DEFAULT_COREFILE.replace("health :8080", `health :${health}`)
    .replace("ready :8181", `ready :${ready}`)
    .replaceAll("zones/", `${join(ROOT, "zones")}/`);
  assert.notEqual(corefile, DEFAULT_COREFILE);
  const s = await startServer(corefile);
  t.after(() => s.stop());
  const moved = (text: string) =>
    text
      .replaceAll("-p 1053", `-p ${s.port}`)
      .replaceAll("localhost:8080", `localhost:${health}`)
      .replaceAll("localhost:8181", `localhost:${ready}`)
      .replaceAll("40053", String(source));
  for (const step of steps) {
    const { stdout } = await run("sh", ["-c", moved(step.command)], { timeout: 30_000 });
    assert.equal(stdout, moved(step.output), `$ ${step.command}`);
  }
});
