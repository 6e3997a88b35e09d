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

test("the Quick start says what ./dev needs, that start stays in the foreground, and what clusterdns is before using it", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const quick = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)![1];
  // What ./dev installs for the native engine (its build_tools line) and npm, which it cannot install.
  const dev = readFileSync(join(ROOT, "dev"), "utf8");
  const tools = /^build_tools\(\) \{\n.*apt_need (.*);/m
    .exec(dev)?.[1]
    .split(" ")
    .map((p) => p.split(":")[0]);
  assert.ok(tools && tools.length >= 3, "dev's build_tools names its compiler");
  for (const need of ["npm", ...tools]) assert.ok(quick.includes(need), `the Quick start names ${need}`);
  assert.match(quick, /`\.\/dev start` stays in the foreground/);
  // The first command line that runs `clusterdns` comes after bin/clusterdns is introduced.
  const firstUse = readme.search(/^(\$ )?(.*\| )?clusterdns (-|migrate|resolve)/m);
  assert.ok(firstUse > 0, "the README runs clusterdns somewhere");
  const intro = readme.indexOf("`bin/clusterdns`");
  assert.ok(intro >= 0 && intro < firstUse, "bin/clusterdns is introduced before its first use");
});
