// Every Corefile example in the documentation parses: the README, deploy/README.md, docs/, plugin
// READMEs and Corefile.example.
// Every example is also set up with the plugin registry (directives known, options checked), so docs
// cannot rot.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { parseCorefile } from "../src/corefile/parser.ts";
import { plugins } from "../src/plugins/index.ts";
import { Instance } from "../src/server/instance.ts";
import { ROOT } from "./helpers/server.ts";

function examples(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/```corefile\n([\s\S]*?)```/g)].map((m) => m[1]);
}

const docs = [
  join(ROOT, "README.md"),
  join(ROOT, "deploy", "README.md"),
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, "docs", f)),
  ...readdirSync(join(ROOT, "src", "plugins"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(ROOT, "src", "plugins", d.name, "README.md")),
].filter((f) => existsSync(f));

test("every plugin folder has a README with its sections and at least one example", () => {
  for (const name of plugins.keys()) {
    const readme = join(ROOT, "src", "plugins", name, "README.md");
    assert.ok(existsSync(readme), `${name} has a README.md`);
    const text = readFileSync(readme, "utf8");
    for (const section of ["## Name", "## Description", "## Syntax", "## Examples"]) {
      assert.ok(text.includes(section), `${name}/README.md has ${section}`);
    }
    assert.ok(examples(readme).length > 0, `${name}/README.md has a corefile example`);
  }
});

test("Corefile.example parses", () => {
  const blocks = parseCorefile(readFileSync(join(ROOT, "Corefile.example"), "utf8"), "Corefile.example");
  assert.equal(blocks.length, 1);
});

for (const file of docs) {
  test(`Corefile examples in ${file.slice(ROOT.length + 1)} parse and set up`, async () => {
    for (const [i, text] of examples(file).entries()) {
      const where = `${file.slice(ROOT.length + 1)} example ${i + 1}`;
      const blocks = parseCorefile(text, where);
      assert.ok(blocks.length > 0, where);
      // Set up as -validate does (no API, no socket). Setup reads the files an example names (zone
      // files, hosts files, kubeconfigs): only a missing file is allowed.
      try {
        const inst = await Instance.create({
          blocks,
          plugins,
          root: ROOT,
          defaultPort: 0,
          log: pino({ level: "silent" }),
          checkOnly: true,
        });
        assert.ok(inst);
      } catch (err) {
        assert.match(
          (err as Error).message,
          /ENOENT|no such file|does not exist/,
          `${where}: ${(err as Error).message}`,
        );
      }
    }
  });
}
