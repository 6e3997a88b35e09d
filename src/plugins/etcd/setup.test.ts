import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

test("every option of CoreDNS's etcd sets up; the ignored ones say so with their line", async () => {
  const f = fakeContext({ zones: ["."] });
  const plugin = await setup(
    dir(
      "etcd",
      ["skydns.local", "10.0.0.0/24"],
      [
        dir("fallthrough", ["in-addr.arpa"]),
        dir("path", ["/skydns"]),
        dir("endpoint", ["http://127.0.0.1:2379", "https://10.0.0.1:2379"]),
        dir("credentials", ["user", "pass"]),
        dir("min-lease-ttl", ["1m"]),
        dir("max-lease-ttl", ["3600"]),
        dir("upstream", [], undefined, 9),
        dir("stubzones"),
      ],
    ),
    f.ctx,
  );
  assert.ok(plugin);
  assert.ok(f.logs.some((l) => /Corefile:9/.test(JSON.stringify(l)) && /upstream/.test(JSON.stringify(l))));
});

test("bad options fail at their file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("etcd", [], [dir("nonsense", [], undefined, 7)]), /^Corefile:7\b.*unknown property 'nonsense'/],
    [
      dir("etcd", [], [dir("endpoint", ["localhost:2379"], undefined, 4)]),
      /^Corefile:4\b.*http:\/\/ or https:\/\//,
    ],
    [dir("etcd", [], [dir("endpoint", [], undefined, 4)]), /^Corefile:4\b.*at least 1/],
    [dir("etcd", [], [dir("credentials", ["onlyuser"], undefined, 5)]), /^Corefile:5\b.*takes 2/],
    [dir("etcd", [], [dir("tls", ["/nonexistent/ca.pem"], undefined, 6)]), /^Corefile:6\b.*cannot read/],
    [dir("etcd", [], [dir("min-lease-ttl", ["soon"], undefined, 8)]), /^Corefile:8\b.*invalid duration/],
    [dir("etcd", [], [dir("path", ["/"], undefined, 8)]), /^Corefile:8\b.*path/],
    [dir("etcd", [], [dir("path", ["/a"]), dir("path", ["/b"], undefined, 9)]), /^Corefile:9\b.*given twice/],
    [
      dir("etcd", [], [dir("min-lease-ttl", ["600"]), dir("max-lease-ttl", ["60"])], 2),
      /^Corefile:2\b.*min-lease-ttl/,
    ],
  ]);
});
