import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "./parser.ts";
import { directiveErrors } from "./check.ts";
import { plugins } from "../plugins/index.ts";
import { MISSING_PLUGINS } from "../compat/coredns.ts";

const errors = (text: string) =>
  directiveErrors(parseCorefile(text, "Corefile", { env: {} }), plugins, MISSING_PLUGINS).map(
    (e) => e.message,
  );

test("a plugin CoreDNS takes once per block is refused at its second line; every such line is reported", () => {
  const got = errors(
    [
      ".:53 {", // 1
      "    errors", // 2
      "    kubernetes cluster.local", // 3
      "    cache 30", // 4
      "    kubernetes example.local", // 5
      "    errors", // 6
      "    log", // 7
      "    log", // 8: log may be given twice
      "    hosts", // 9
      "    cache", // 10
      "    hosts", // 11
      "}", // 12
      "example.org {", // 13
      "    errors", // 14: another block
      "}", // 15
    ].join("\n"),
  );
  const once = (line: number, plugin: string, first: number) =>
    `Corefile:${line} - Error during parsing: ${plugin}: this plugin can only be used once per server block (first at Corefile:${first})`;
  assert.deepEqual(got, [
    once(5, "kubernetes", 3),
    once(6, "errors", 2),
    once(10, "cache", 4),
    once(11, "hosts", 9),
  ]);
});

test("a forward whose FROM an earlier forward already takes never runs, and is refused at its line", () => {
  const got = errors(
    [
      ". {", // 1
      "    forward lab.example.org 192.0.2.3", // 2
      "    forward example.org 192.0.2.2", // 3: inner first, as forward's README says: runs
      "    forward . 192.0.2.1", // 4
      "    forward . 192.0.2.9", // 5: never reached
      "    forward sub.example.org 192.0.2.4", // 6: never reached
      "}", // 7
      "x.org {", // 8
      "    forward . 192.0.2.1 {", // 9
      "        except y.x.org", // 10
      "    }", // 11
      "    forward y.x.org 192.0.2.5", // 12: excepted above, so reached
      "}", // 13
      "z.org {", // 14
      "    forward . 192.0.2.1 {", // 15
      "        next NXDOMAIN", // 16
      "    }", // 17
      "    forward . 192.0.2.2", // 18: asked when the first says NXDOMAIN
      "}", // 19
    ].join("\n"),
  );
  assert.equal(got.length, 2, got.join("\n"));
  assert.match(
    got[0],
    /^Corefile:5 - .*forward: never reached: 'forward \.' at Corefile:4 already takes every name in \./,
  );
  assert.match(
    got[1],
    /^Corefile:6 - .*'forward example\.org\.' at Corefile:3 already takes every name in sub\.example\.org\./,
  );
});

test("plugins CoreDNS removed say what replaces them, with the release that removed them", () => {
  const got = errors(
    ". {\n    proxy . 8.8.8.8\n    federation cluster.local {\n        prod prod.example.com\n    }\n}\n",
  );
  assert.deepEqual(got, [
    "Corefile:2 - Error during parsing: plugin proxy was removed from CoreDNS in 1.5.0: use forward, which takes the same FROM TO... line (`policy`, `health_check` and `except` too; `protocol` has no equivalent)",
    "Corefile:3 - Error during parsing: plugin federation was removed from CoreDNS in 1.7.0: kube-dns federations are gone from CoreDNS and clusterdns; delete the line",
  ]);
});
