import { test } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import pino from "pino";
import { setup, parseDnstap } from "./setup.ts";
import { FrameStream } from "./frame-stream.ts";
import { ipOctets } from "./ip-octets.ts";
import { VERSION } from "../../version.ts";
import { directive as dir } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

test("dnstap SOCKET: a path or unix:// is a unix socket (relative to the Corefile), with CoreDNS's defaults", () => {
  const c = parseDnstap(dir("dnstap", ["tap.sock"]), "/etc/coredns");
  assert.deepEqual(c.endpoint, { kind: "unix", path: "/etc/coredns/tap.sock" });
  assert.equal(c.full, false);
  assert.equal(c.identity, hostname());
  assert.equal(c.version, `clusterdns-${VERSION}`);
  assert.equal(c.extra, undefined);
  assert.equal(c.queueFrames, 10_000);
  assert.equal(c.writeBufferOctets, 1024 * 1024);
  assert.deepEqual(parseDnstap(dir("dnstap", ["unix:///tmp/t.sock", "full"]), "/").endpoint, {
    kind: "unix",
    path: "/tmp/t.sock",
  });
  assert.equal(parseDnstap(dir("dnstap", ["unix:///tmp/t.sock", "full"]), "/").full, true);
});

test("dnstap tcp:// and tls:// take HOST:PORT; the block sets identity, version, extra and skipverify", () => {
  const block = [
    dir("identity", ["dns-1"]),
    dir("version", ["v-1"]),
    dir("extra", ["cluster-a"]),
    dir("skipverify"),
    dir("message_types", ["CLIENT_QUERY", "FORWARDER_RESPONSE"]),
  ];
  const c = parseDnstap(dir("dnstap", ["tls://[fd00::1]:6000", "full", "4", "2"], block), "/");
  assert.deepEqual(c.endpoint, { kind: "tls", host: "fd00::1", port: 6000, skipVerify: true });
  assert.equal(c.identity, "dns-1");
  assert.equal(c.version, "v-1");
  assert.equal(c.extra, "cluster-a");
  assert.equal(c.types, (1 << 5) | (1 << 8));
  assert.equal(c.writeBufferOctets, 4 * 1024 * 1024);
  assert.equal(c.queueFrames, 20_000);
  assert.deepEqual(parseDnstap(dir("dnstap", ["tcp://dnstap.example:6000"]), "/").endpoint, {
    kind: "tcp",
    host: "dnstap.example",
    port: 6000,
    skipVerify: false,
  });
});

test("skipverify on a socket without TLS is accepted and said to do nothing", () => {
  const said: string[] = [];
  parseDnstap(dir("dnstap", ["tcp://127.0.0.1:6000"], [dir("skipverify")]), "/", (opt, why) =>
    said.push(`${opt.file}:${opt.line} ${why}`),
  );
  assert.deepEqual(said, ["Corefile:3 only a tls:// endpoint has a certificate to verify"]);
});

test("dnstap: every mistake is one line naming file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("dnstap"), /^Corefile:3 - .*dnstap: 'dnstap' takes 1 to 4 argument/],
    [dir("dnstap", ["/tmp/s", "verbose"]), /^Corefile:3 - .*dnstap: unexpected 'verbose' \(want 'full'/],
    [dir("dnstap", ["/tmp/s", "full", "x"]), /^Corefile:3 - .*dnstap: 'x' is not an integer/],
    [dir("dnstap", ["/tmp/s", "full", "1", "0"]), /^Corefile:3 - .*dnstap: 0 is out of range/],
    [
      dir("dnstap", ["tcp://127.0.0.1"]),
      /^Corefile:3 - .*dnstap: 'tcp:\/\/127.0.0.1' is not tcp:\/\/HOST:PORT/,
    ],
    [dir("dnstap", ["udp://127.0.0.1:6000"]), /^Corefile:3 - .*dnstap: unknown scheme 'udp:\/\/'/],
    [dir("dnstap", ["unix://"]), /^Corefile:3 - .*dnstap: the socket's path is empty/],
    [dir("dnstap", ["/tmp/s"], [dir("identity")]), /^Corefile:3 - .*dnstap: 'identity' takes 1 argument/],
    [
      dir("dnstap", ["/tmp/s"], [dir("extra", ["ns={type}"])]),
      /^Corefile:3 - .*extra: placeholder \{type\} is not supported \(only \{\/LABEL\} metadata\)/,
    ],
    [
      dir("dnstap", ["/tmp/s"], [dir("extra", ["{/kubernetes}"])]),
      /extra: placeholder \{\/kubernetes\} is not/,
    ],
    [dir("dnstap", ["/tmp/s"], [dir("message_types", ["CQ"])]), /message_types: unknown type 'CQ'/],
    [dir("dnstap", ["/tmp/s"], [dir("buffer", ["1"])]), /^Corefile:3 - .*dnstap: unknown property 'buffer'/],
  ]);
});

test("ipOctets: IPv4, IPv6 (a zone dropped) and IPv4-mapped IPv6 as IPv4; anything else 0", () => {
  const out = new Uint8Array(16);
  assert.equal(ipOctets("10.1.2.3", out), 4);
  assert.deepEqual([...out.subarray(0, 4)], [10, 1, 2, 3]);
  assert.equal(ipOctets("fd00::1:2", out), 16);
  assert.deepEqual([...out], [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2]);
  assert.equal(ipOctets("fe80::1%eth0", out), 16);
  assert.equal(out[15], 1);
  assert.equal(ipOctets("::ffff:192.0.2.7", out), 4);
  assert.deepEqual([...out.subarray(0, 4)], [192, 0, 2, 7]);
  for (const bad of ["", "1.2.3", "1.2.3.256", "1.2.3.4.5", "host.example", "1..2.3"]) {
    assert.equal(ipOctets(bad, out), 0, bad);
  }
});

test("frames past the queue's bound are dropped and counted, never thrown, while no receiver listens", async () => {
  const s = new FrameStream({
    endpoint: { kind: "unix", path: "/nonexistent/dnstap.sock" },
    maxFrames: 3,
    maxOctets: 1 << 20,
    socketOctets: 1 << 20,
    log: pino({ level: "silent" }),
  });
  s.start();
  for (let i = 0; i < 5; i++) {
    const b = s.reserve(10);
    if (b !== undefined) s.commit(s.frameAt + 10);
  }
  assert.deepEqual(s.stats, { sent: 0, dropped: 2 });
  await s.close();
  assert.equal(s.reserve(10), undefined, "a closed stream takes nothing");
  assert.equal(s.stats.dropped, 3);
});
