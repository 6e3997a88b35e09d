import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SetupContext } from "../../setup/context.ts";
import { setup } from "./setup.ts";
import type { SearchPathSource } from "./search-path.ts";
import { SEARCH_PATHS } from "../kubernetes/answers/search-paths.ts";
import { offer } from "../offers.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors, configErrorLike } from "../../../test/helpers/config-errors.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { newQuery, replyTo } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const autopath = (...args: string[]) => directive("autopath", args);

/** A context whose block holds these directives (autopath and what it refers to). */
function withDirectives(names: string[], root?: string) {
  const f = fakeContext({ zones: ["."], root });
  const ctx: SetupContext = { ...f.ctx, block: { ...f.ctx.block, directives: names } };
  return { f, ctx };
}

test("autopath: bad arguments are start-up errors with file and line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "autopath-setup-"));
  try {
    writeFileSync(join(dir, "no-search.conf"), "nameserver 10.96.0.10\noptions ndots:5\n");
    writeFileSync(join(dir, "root-only.conf"), "nameserver 127.0.0.53\nsearch .\n");
    await assertConfigErrors(
      setup,
      [
        [
          directive("autopath", []),
          /^Corefile:3 - Error during parsing: autopath: 'autopath' takes at least 1 argument/,
        ],
        [autopath("@etcd"), /'@etcd' names no plugin that knows clients \(want @kubernetes\)/],
        [autopath("@kubernetes"), /'@kubernetes' needs the kubernetes plugin in this server block/],
        [autopath("missing.conf"), /cannot read .*missing\.conf/],
        [autopath("no-search.conf"), /no-search\.conf has no search domains/],
        [autopath("root-only.conf"), /root-only\.conf has no search domains/],
        [
          autopath("example.org", "@kubernetes"),
          /not inside the server block's zones|needs the kubernetes plugin/,
        ],
      ],
      () => ({ ...fakeContext({ zones: ["."], root: dir }).ctx }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("autopath @kubernetes: a kubernetes block that cannot tell clients apart stops start-up", async () => {
  const { f, ctx } = withDirectives(["autopath", "kubernetes"]);
  await setup(autopath("@kubernetes"), ctx);
  const unusable: SearchPathSource = {
    searchPath: () => undefined,
    unusable: "@kubernetes needs 'pods verified'",
  };
  offer(ctx.block.shared, SEARCH_PATHS, unusable);
  await assert.rejects(
    f.start(),
    configErrorLike(/^Corefile:3 - Error during parsing: autopath: @kubernetes needs 'pods verified'/),
  );
});

test("autopath @kubernetes: without the plugin's offer start-up fails too", async () => {
  const { f, ctx } = withDirectives(["autopath", "kubernetes"]);
  await setup(autopath("@kubernetes"), ctx);
  await assert.rejects(f.start(), configErrorLike(/the kubernetes plugin offers no search paths/));
});

test("autopath RESOLV-CONF: the file's last search line is every client's path", async () => {
  const dir = mkdtempSync(join(tmpdir(), "autopath-setup-"));
  try {
    writeFileSync(join(dir, "resolv.conf"), "search old.example\nsearch Corp.Example lab.example\n");
    const looked: string[] = [];
    const f = fakeContext({
      zones: ["."],
      root: dir,
      lookup: (name, qtype) => {
        looked.push(name);
        return Promise.resolve(replyTo(newQuery(name, qtype), Rcode.NXDOMAIN));
      },
    });
    const plugin = await setup(autopath("resolv.conf"), f.ctx);
    const r = await plugin!(recordingNext(Rcode.NXDOMAIN)).serve(makeRequest("x.corp.example", Type.A));
    assert.equal(r.rcode, Rcode.NXDOMAIN);
    assert.deepEqual(looked, ["x.lab.example.", "x."], "the last search line wins");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
