import { test } from "node:test";
import assert from "node:assert/strict";
import { FlagError, parseFlags } from "./cli-flags.ts";

test("-workers: a count from 1 to 1024 or auto; anything else is a flag error that says so", () => {
  assert.equal(parseFlags([]).workers, undefined);
  assert.equal(parseFlags(["-workers", "2"]).workers, 2);
  assert.equal(parseFlags(["--workers=1024"]).workers, 1024);
  assert.equal(parseFlags(["-workers", "auto"]).workers, "auto");
  for (const bad of ["0", "1025", "-1", "two", ""]) {
    assert.throws(
      () => parseFlags([`-workers=${bad}`]),
      (err: unknown) =>
        err instanceof FlagError && /-workers: '.*' is not auto or a number from 1 to 1024/.test(err.message),
    );
  }
});

test("node-cache's flags (the node-local-dns DaemonSet's args) are named as node-cache's, never 'unexpected argument'", () => {
  for (const flag of ["-localip", "-health-port", "-setupiptables", "--skipteardown=true", "-upstreamsvc"]) {
    assert.throws(
      () => parseFlags([flag]),
      (err: unknown) =>
        err instanceof FlagError &&
        err.message.startsWith(`unknown flag '${flag}': node-cache's (NodeLocal DNSCache);`) &&
        /the Corefile's nodelocal directive/.test(err.message),
    );
  }
  assert.throws(() => parseFlags(["-no-such-thing"]), /^Error: unknown flag '-no-such-thing' \(see -help\)$/);
  assert.throws(() => parseFlags(["Corefile"]), /unexpected argument 'Corefile'/);
});
