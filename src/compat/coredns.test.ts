import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { COREDNS_PLUGINS, MISSING_PLUGINS, partsFor } from "./coredns.ts";
import { generatedPart, renderTables } from "./render.ts";
import { plugins } from "../plugins/index.ts";
import { parseCorefile } from "../corefile/parser.ts";
import { ConfigError } from "../corefile/errors.ts";
import { Instance } from "../server/instance.ts";

const ROOT = join(import.meta.dirname, "..", "..");

test("docs/compatibility.md holds the tables as rendered from the data", () => {
  const doc = readFileSync(join(ROOT, "docs", "compatibility.md"), "utf8");
  assert.equal(generatedPart(doc), renderTables(), "run `node src/compat/render.ts` to rewrite them");
});

test("every plugin of the registry is supported there, every other plugin of CoreDNS is missing", () => {
  const names = COREDNS_PLUGINS.map((p) => p.plugin);
  assert.equal(new Set(names).size, names.length, "one row per plugin");
  for (const p of COREDNS_PLUGINS) {
    assert.equal(p.verdict === "missing", !plugins.has(p.plugin), `${p.plugin}: registered <=> supported`);
    if (p.verdict !== "same") assert.ok(p.note, `${p.plugin}: a ${p.verdict} plugin says why`);
  }
  for (const name of plugins.keys()) assert.ok(names.includes(name), `${name} has a row`);
  assert.deepEqual([...MISSING_PLUGINS].sort(), names.filter((n) => !plugins.has(n)).sort());
});

/** Sets a Corefile up as -validate does: every plugin's setup, no socket, no API. */
async function setUp(text: string): Promise<unknown> {
  try {
    await Instance.create({
      blocks: parseCorefile(text, "Corefile"),
      plugins,
      notSupported: MISSING_PLUGINS,
      root: ROOT,
      defaultPort: 0,
      log: pino({ level: "silent" }),
      checkOnly: true,
    });
    return undefined;
  } catch (err) {
    return err;
  }
}

test("an option said to be missing is refused at its line; the others set up", async () => {
  for (const p of COREDNS_PLUGINS) {
    for (const part of p.parts ?? []) {
      const where = `${p.plugin} ${part.what}`;
      // The first line of the example that uses it, as migrate coredns finds it.
      const blocks = parseCorefile(part.example, "Corefile");
      const lines = blocks.flatMap((b) =>
        b.directives
          .filter((d) => d.name === p.plugin)
          .flatMap((d) => [
            { at: d.line, words: [d.name, ...d.args.map((t) => t.text)], inBlock: false },
            ...(d.block ?? []).map((o) => ({
              at: o.line,
              words: [o.name, ...o.args.map((t) => t.text)],
              inBlock: true,
            })),
          ]),
      );
      const line = lines.find((l) => partsFor(p, l.words, l.inBlock).includes(part))?.at ?? 0;
      assert.ok(line > 0, `${where}: the example uses it`);
      const err = await setUp(part.example);
      if (part.verdict === "missing") {
        assert.ok(err instanceof ConfigError, `${where}: refused, not ${String(err)}`);
        assert.equal(err.line, line, `${where}: at its line (${err.message})`);
      } else assert.equal(err, undefined, `${where}: sets up`);
    }
  }
});
