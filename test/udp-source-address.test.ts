// Replies leave from the address the query was sent to (RFC 2181 4.1). A server bound to a wildcard
// address on a host with two addresses of a family: a query to the second from a client on the first,
// left to the route, is answered from the first, and clients whose socket is connected to the address
// they asked (dig, glibc, musl) drop the reply. A network namespace holds 127.0.0.0/8 and 10.53.0.2,
// ::1 and fd00:53::2; dig asks each, from 127.0.0.1 or ::1. The batched engine answers from each
// query's destination (IP_PKTINFO, IPV6_PKTINFO); dgram cannot, and says so once in its log. Needs
// root and iproute2.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { startClusterdnsInNetns, type NetnsServer } from "./helpers/netns-cluster.ts";
import { parseDig } from "./helpers/dig.ts";
import { UDP_ENGINES, engineArgs } from "./helpers/engines.ts";

const ADDRESSES = ["127.0.0.1", "127.0.0.2", "10.53.0.2", "::1", "fd00:53::2"];

describe("UDP replies from the address the query was sent to", () => {
  let ns: Netns;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-source-"));
    writeFileSync(join(dir, "Corefile"), ".:53 {\n    whoami\n}\n");
    ns = await createNetns(undefined, "nameserver 127.0.0.1\n");
    await ns.addAddress("10.53.0.2/32");
    const r = await ns.exec("ip", ["-6", "address", "add", "fd00:53::2/128", "dev", "lo", "nodad"]);
    assert.equal(r.code, 0, r.stderr);
  });

  after(async () => {
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** dig's status for a query to `address` over UDP from the family's loopback address, or "timeout"
   * when no reply it accepts came. */
  const ask = async (address: string): Promise<string> => {
    const from = address.includes(":") ? "::1" : "127.0.0.1";
    const r = await ns.exec("dig", [
      `@${address}`,
      "-b",
      from,
      "whoami.example.",
      "A",
      "+tries=1",
      "+time=2",
      "+notcp",
    ]);
    if (/timed out|no servers could be reached/.test(r.stdout)) return "timeout";
    return parseDig(r.stdout).status;
  };

  for (const engine of UDP_ENGINES) {
    it(`${engine}: every address is answered from itself${engine === "dgram" ? " (or a warning says it is not)" : ""}`, async () => {
      let server: NetnsServer | undefined;
      try {
        server = await startClusterdnsInNetns(
          ns,
          join(dir, "Corefile"),
          {},
          {
            flags: engineArgs(engine),
            ready: /"msg":"listening"/,
          },
        );
        const got = Object.fromEntries(await Promise.all(ADDRESSES.map(async (a) => [a, await ask(a)])));
        const warned = server.logs.filter((l) => /leave from the route's source address/.test(String(l.msg)));
        if (engine === "batched") {
          assert.deepEqual(got, Object.fromEntries(ADDRESSES.map((a) => [a, "NOERROR"])));
          assert.equal(warned.length, 0);
        } else {
          // Only the client's own address is answered; the warning says why, once.
          assert.deepEqual(got, {
            "127.0.0.1": "NOERROR",
            "127.0.0.2": "timeout",
            "10.53.0.2": "timeout",
            "::1": "NOERROR",
            "fd00:53::2": "timeout",
          });
          assert.equal(warned.length, 1, JSON.stringify(server.logs));
        }
      } finally {
        await server?.stop();
      }
    });
  }
});
