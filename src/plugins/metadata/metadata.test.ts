import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { isLabel, metadataOf } from "./labels.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

const q = (qname: string, remoteAddress = "10.0.0.1") => ({ qname, qtype: 1, remoteAddress });

test("labels are found among the providers, for names in ZONES only, and computed when read", async () => {
  const f = fakeContext({ zones: ["example.org."] });
  assert.equal(await setup(dir("metadata", ["a.example.org"]), f.ctx), undefined, "no handler");
  const collector = metadataOf(f.ctx.block.shared)!;
  let reads = 0;
  const label = collector.label("test/who");
  collector.provide({
    label: (name) =>
      name === "test/who" ? { value: (m) => (reads++, m.remoteAddress), perClient: true } : undefined,
  });
  collector.provide({ label: () => ({ value: () => "second", perClient: false }) });
  await f.start();
  assert.equal(label.value(q("x.a.example.org.")), "10.0.0.1", "the first provider that has it");
  assert.equal(label.value(q("b.example.org.")), undefined, "outside ZONES: no metadata");
  assert.equal(reads, 1);
  assert.equal(label.perClient, true);
  assert.equal(collector.label("other/x").value(q("a.example.org.")), "second");
});

test("a label read before the providers registered is found once they have", async () => {
  const f = fakeContext();
  await setup(dir("metadata"), f.ctx);
  const collector = metadataOf(f.ctx.block.shared)!;
  const label = collector.label("late/one");
  assert.equal(label.value(q("example.org.")), undefined);
  collector.provide({ label: () => ({ value: () => "here", perClient: false }) });
  assert.equal(label.value(q("example.org.")), "here");
});

test("labels have CoreDNS's form, and setup checks its zones", async () => {
  assert.equal(isLabel("kubernetes/client-namespace"), true);
  for (const bad of ["/kubernetes", "kubernetes/", "plain"]) assert.equal(isLabel(bad), false, bad);
  await assertConfigErrors(
    setup,
    [
      [dir("metadata", ["other.org"], undefined, 4), /^Corefile:4 - .*zone 'other\.org\.' is not inside/],
      [dir("metadata", [], [dir("x")], 5), /^Corefile:5 - .*'metadata' takes no block/],
    ],
    () => fakeContext({ zones: ["example.org."] }).ctx,
  );
});
