import { test } from "node:test";
import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import type { Directive } from "../../corefile/types.ts";
import type { SetupContext } from "../../setup/context.ts";
import { setup } from "./setup.ts";
import { resolveBind } from "./bind.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors, configErrorLike } from "../../../test/helpers/config-errors.ts";

test("addresses are added to the block's bind list, several lines adding up", async () => {
  const ctx = fakeContext().ctx;
  assert.equal(await setup(dir("bind", ["127.0.0.1", "::1"]), ctx), undefined);
  await setup(dir("bind", ["::1", "192.0.2.53"]), ctx);
  assert.deepEqual(ctx.block.bind, ["127.0.0.1", "::1", "192.0.2.53"]);
});

test("an interface name stands for its addresses; except removes addresses or interfaces", async () => {
  const ifaces = networkInterfaces();
  const [name, infos] = Object.entries(ifaces).find(([, list]) => (list?.length ?? 0) > 0)!;
  const addrs = resolveBind(name, ifaces) as string[];
  assert.equal(addrs.length, infos!.length);

  const ctx = fakeContext().ctx;
  await setup(dir("bind", [name]), ctx);
  assert.deepEqual(ctx.block.bind, addrs);

  if (addrs.length > 1) {
    const minus = fakeContext().ctx;
    await setup(dir("bind", [name], [dir("except", [addrs[0]])]), minus);
    assert.deepEqual(minus.block.bind, addrs.slice(1));
  }

  const none = fakeContext().ctx;
  await assert.rejects(
    async () => setup(dir("bind", [name], [dir("except", [name])], 4), none),
    configErrorLike(/^Corefile:4 - .*bind: no address left/),
  );
});

test("link-local IPv6 addresses of an interface carry it as scope", () => {
  const fake = {
    eth9: [
      { address: "fe80::1", family: "IPv6", netmask: "", mac: "", internal: false, cidr: null, scopeid: 3 },
      { address: "fd00::9", family: "IPv6", netmask: "", mac: "", internal: false, cidr: null, scopeid: 0 },
      { address: "10.9.9.9", family: "IPv4", netmask: "", mac: "", internal: false, cidr: null },
    ],
  } as Parameters<typeof resolveBind>[1];
  assert.deepEqual(resolveBind("eth9", fake), ["fe80::1%eth9", "fd00::9", "10.9.9.9"]);
});

test("setup errors name file:line", async () => {
  const bad: [Directive, RegExp][] = [
    [dir("bind", [], undefined, 2), /^Corefile:2 - .*bind: 'bind' takes at least 1/],
    [
      dir("bind", ["127.0.0.1", "no-such-iface0"], undefined, 3),
      /^Corefile:3 - .*'no-such-iface0' is neither an IP/,
    ],
    [dir("bind", ["10.0.0.256"], undefined, 4), /^Corefile:4 - .*'10.0.0.256' is neither/],
    [
      dir("bind", ["127.0.0.1"], [dir("except", [], undefined, 5)]),
      /^Corefile:5 - .*'except' takes at least 1/,
    ],
    [
      dir("bind", ["127.0.0.1"], [dir("except", ["nope0"], undefined, 6)]),
      /^Corefile:6 - .*'nope0' is neither/,
    ],
    [
      dir("bind", ["127.0.0.1"], [dir("only", ["x"], undefined, 7)]),
      /^Corefile:7 - .*unknown property 'only'/,
    ],
  ];
  const used: SetupContext[] = [];
  const fresh = () => {
    const { ctx } = fakeContext();
    used.push(ctx);
    return ctx;
  };
  await assertConfigErrors(setup, bad, fresh);
  assert.equal(used.length, bad.length);
  for (const ctx of used) assert.deepEqual(ctx.block.bind, [], "nothing is added on error");
});
