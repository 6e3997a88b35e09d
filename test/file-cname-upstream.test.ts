// A file zone's CNAME whose target lies outside the zone: the target is resolved through the server
// itself and its records follow the chain, as CoreDNS's file does (its upstream is always on:
// test/file_upstream_test.go in CoreDNS). A stub resolver such as glibc's does not chase a CNAME
// itself, so without them the name has no address for it.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const ZONE = zoneText(
  "example.org",
  "www 60 IN CNAME www.example.net.",
  "chain 60 IN CNAME www",
  "gone 60 IN CNAME gone.example.net.",
  "moved 60 IN CNAME target.example.net.",
);

const COREFILE = `. {
    file db.example.org example.org
    hosts hosts.txt {
        10.0.0.1 www.example.net
        reload 100ms
        fallthrough
    }
}
`;

let srv: RunningServer;
before(async () => {
  srv = await startServer(COREFILE, {
    files: {
      "db.example.org": ZONE,
      "hosts.txt": "10.0.0.1 target.example.net\n",
    },
  });
});
after(async () => {
  await srv?.stop();
});

test("file: an out-of-zone CNAME target is resolved through the server", async () => {
  const r = await dig(srv.port, "www.example.org", "A");
  assert.equal(r.status, "NOERROR");
  assert.deepEqual(r.answer, [
    "www.example.org. 60 IN CNAME www.example.net.",
    "www.example.net. 3600 IN A 10.0.0.1",
  ]);
  const chain = await dig(srv.port, "chain.example.org", "A");
  assert.deepEqual(chain.answer, [
    "chain.example.org. 60 IN CNAME www.example.org.",
    "www.example.org. 60 IN CNAME www.example.net.",
    "www.example.net. 3600 IN A 10.0.0.1",
  ]);
});

test("file: a target nothing answers leaves the CNAME alone, as does a CNAME question", async () => {
  const gone = await dig(srv.port, "gone.example.org", "A");
  assert.equal(gone.status, "NOERROR");
  assert.deepEqual(gone.answer, ["gone.example.org. 60 IN CNAME gone.example.net."]);
  const cname = await dig(srv.port, "www.example.org", "CNAME");
  assert.deepEqual(cname.answer, ["www.example.org. 60 IN CNAME www.example.net."]);
});

test("file: a change of the target (hosts read again) reaches the chained answer within a second and a half", async () => {
  const first = await dig(srv.port, "moved.example.org", "A");
  assert.equal(first.answer.at(-1), "target.example.net. 3600 IN A 10.0.0.1");
  writeFileSync(join(srv.dir, "hosts.txt"), "10.0.0.2 target.example.net\n");
  // hosts reads the file again within 100 ms; the chained reply may be replayed for a second.
  await new Promise((r) => setTimeout(r, 1500));
  const later = await dig(srv.port, "moved.example.org", "A");
  assert.equal(later.answer.at(-1), "target.example.net. 3600 IN A 10.0.0.2");
});
