import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { procAddress, othersServing } from "./sockets.ts";
import { tableScript } from "./rules-nftables.ts";
import { wantedRules } from "./rules.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

const bound =
  (...addresses: string[]) =>
  () => {
    const f = fakeContext();
    f.ctx.block.bind.push(...addresses);
    return f.ctx;
  };

test("bad directives are refused at their line", async () => {
  await assertConfigErrors(
    setup,
    [
      [dir("nodelocal", ["a", "b"]), /takes 0 to 1 argument/],
      [dir("nodelocal", ["much-too-long-name0"]), /'much-too-long-name0' is not an interface name/],
      [dir("nodelocal", [], [dir("rules", ["ebtables"])]), /rules 'ebtables': want one of auto, nftables/],
      [dir("nodelocal", [], [dir("check", ["often"])]), /invalid duration 'often'/],
      [dir("nodelocal", [], [dir("keep"), dir("keep")]), /'keep' is given twice/],
      [dir("nodelocal", [], [dir("teardown", ["no"])]), /unknown property 'teardown'/],
    ],
    bound("169.254.20.10"),
  );
  await assertConfigErrors(
    setup,
    [[dir("nodelocal"), /Corefile:3 - Error during parsing: nodelocal: the block has no bind/]],
    bound(),
  );
  await assertConfigErrors(
    setup,
    [[dir("nodelocal"), /bind 0.0.0.0: the node-local addresses must be plain/]],
    bound("0.0.0.0"),
  );
});

test("one nodelocal per configuration: a second block's is refused, naming the first", async () => {
  const ctx = bound("169.254.20.10")();
  assert.equal(await setup(dir("nodelocal", [], undefined, 3), ctx), undefined);
  await assert.rejects(
    async () => setup(dir("nodelocal", [], undefined, 9), ctx),
    /Corefile:9 .* given twice \(first at Corefile:3\)/,
  );
});

test("setting up touches nothing: the node is changed only when the server starts", async () => {
  const f = fakeContext();
  f.ctx.block.bind.push("169.254.20.10");
  await setup(dir("nodelocal", ["cdnstest0"]), f.ctx);
  assert.equal(f.startup.length, 1);
  assert.equal(f.listening.length, 1);
  assert.equal(f.stopping.length, 1);
  assert.equal(f.shutdown.length, 1);
});

test("/proc/net/udp's addresses: IPv4 and IPv6 words in host order", () => {
  assert.equal(procAddress("169.254.20.10", "LE"), "0A14FEA9");
  assert.equal(procAddress("169.254.20.10", "BE"), "A9FE140A");
  assert.equal(procAddress("127.0.0.1", "LE"), "0100007F");
  assert.equal(procAddress("fd00::10", "LE"), "000000FD000000000000000010000000");
});

test("othersServing counts other processes' unconnected sockets on the addresses and the served port", () => {
  const udp = [
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    // another clusterdns serving 169.254.20.10:53, and our own socket there
    "  1: 0A14FEA9:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 111 2",
    "  2: 0A14FEA9:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 222 2",
    // a hostNetwork client connected to 10.96.0.10:53 (its local address is the Service IP)
    "  3: 0A00600A:A1B2 0A00600A:0035 01 00000000:00000000 00:00000000 00000000     0        0 333 2",
    // an unconnected socket on 10.96.0.10, another port; one on 127.0.0.1:53
    "  4: 0A00600A:1389 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 444 2",
    "  5: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 555 2",
    // a closing clusterdns's socket, connected to its own address to leave the port's group
    "  6: 0A00600A:0035 0A00600A:0035 01 00000000:00000000 00:00000000 00000000     0        0 666 2",
  ].join("\n");
  const reader = {
    read: (p: string) => (p === "/proc/net/udp" ? udp : undefined),
    ownInodes: () => new Set(["222"]),
  };
  const addresses = ["169.254.20.10", "10.96.0.10"];
  assert.deepEqual(
    [...othersServing(addresses, 53, reader)],
    [
      ["169.254.20.10", 1],
      ["10.96.0.10", 0],
    ],
  );
  assert.deepEqual([...othersServing(addresses, 5001, reader)][1], ["10.96.0.10", 1]);
});

test("the nftables table: NOTRACK for queries and replies, UDP and TCP, per address", () => {
  const text = tableScript(
    wantedRules(
      [
        { address: "169.254.20.10", port: 53 },
        { address: "fd00::10", port: 53 },
      ],
      false,
    ),
  );
  assert.match(text, /^table inet clusterdns_nodelocal \{/);
  assert.match(text, /type filter hook prerouting priority raw;/);
  assert.match(text, /ip daddr 169\.254\.20\.10 udp dport 53 notrack/);
  assert.match(text, /ip saddr 169\.254\.20\.10 tcp sport 53 notrack/);
  assert.match(text, /ip6 daddr fd00::10 tcp dport 53 notrack/);
  assert.equal(text.match(/notrack/g)?.length, 12);
});

test("a stop with no successor keeps only the replies' rules: queries pass conntrack, replies do not", () => {
  const endpoints = [{ address: "10.96.0.10", port: 53 }];
  const text = tableScript(wantedRules(endpoints, false, { queries: false }));
  assert.doesNotMatch(text, /daddr/);
  assert.match(text, /ip saddr 10\.96\.0\.10 udp sport 53 notrack/);
  const iptables = wantedRules(endpoints, true, { queries: false });
  assert.deepEqual(
    iptables.filter((r) => r.table === "raw").map((r) => `${r.chain} ${r.match}`),
    ["OUTPUT saddr", "OUTPUT saddr"],
  );
  assert.equal(iptables.filter((r) => r.table === "filter").length, 4, "the ACCEPT rules stay");
});
