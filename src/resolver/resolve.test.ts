import { test } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import {
  serveTable,
  type RecordedQuery,
  type Table,
  type TableServer,
} from "../../test/helpers/recording-dns-server.ts";
import { parseResolvConf, podResolvConf } from "./resolv-conf.ts";
import { resolve, type ResolveOptions } from "./resolve.ts";
import { Type } from "../dns/constants.ts";

const TABLE: Table = {
  "web.default.svc.cluster.local.": { A: ["10.0.0.1"], AAAA: ["fd00::1"] },
  "v4.default.svc.cluster.local.": { A: ["10.0.0.2", "10.0.0.3"] },
  "big.default.svc.cluster.local.": { A: ["10.0.1.1"], truncate: true },
  "sf.default.svc.cluster.local.": { rcode: "SERVFAIL" },
  "half.default.svc.cluster.local.": { AAAA: ["fd00::5"], rcode: { A: "SERVFAIL" } },
  "alias.default.svc.cluster.local.": { CNAME: "web.default.svc.cluster.local." },
  "lame.": { noAuthority: true },
};

async function withServer(
  table: Table,
  fn: (s: TableServer, seen: RecordedQuery[]) => Promise<void>,
): Promise<void> {
  const seen: RecordedQuery[] = [];
  const s = await serveTable(table, "127.0.0.1", 0, (q) => seen.push(q));
  try {
    await fn(s, seen);
  } finally {
    await s.close();
  }
}

function opts(port: number, extra = "", o: Partial<ResolveOptions> = {}): ResolveOptions {
  const conf = parseResolvConf(podResolvConf("default") + extra);
  return { conf, servers: [{ address: "127.0.0.1", port }], ...o };
}

const sent = (t: { queries: { name: string; type: string; transport: string }[] }) =>
  t.queries.map((q) => `${q.type} ${q.name}${q.transport === "tcp" ? " tcp" : ""}`);

test("getaddrinfo: A and AAAA per candidate until one answers", async () => {
  await withServer(TABLE, async (s, seen) => {
    const t = await resolve("web", opts(s.port));
    assert.deepEqual(sent(t), ["A web.default.svc.cluster.local.", "AAAA web.default.svc.cluster.local."]);
    assert.equal(seen.length, 2, "what the trace shows is what was sent");
    assert.deepEqual(t.result.addresses, ["10.0.0.1", "fd00::1"]);
    assert.equal(t.result.canonicalName, "web.default.svc.cluster.local");
    assert.equal(t.result.resolved, true);
    assert.equal(t.queries[0].rcode, "NOERROR");
    assert.deepEqual(t.queries[0].answers, ["web.default.svc.cluster.local. 30 A 10.0.0.1"]);
  });
});

test("not found anywhere: every candidate, EAI_NONAME", async () => {
  await withServer(TABLE, async (s) => {
    const t = await resolve("nothere", opts(s.port));
    assert.equal(t.queries.length, 8);
    assert.deepEqual(
      t.queries.map((q) => q.rcode),
      Array(8).fill("NXDOMAIN"),
    );
    assert.equal(t.result.error, "EAI_NONAME");
    assert.equal(t.result.herrno, "HOST_NOT_FOUND");
  });
});

test("SERVFAIL: sent once per attempt, then the next candidate; EAI_AGAIN in the end", async () => {
  await withServer(TABLE, async (s) => {
    const t = await resolve("sf", opts(s.port, "options attempts:3\n"));
    assert.deepEqual(sent(t).slice(0, 7), [
      ...Array(3).fill(["A sf.default.svc.cluster.local.", "AAAA sf.default.svc.cluster.local."]).flat(),
      "A sf.svc.cluster.local.",
    ]);
    assert.equal(t.result.error, "EAI_AGAIN");
  });
});

test("an A SERVFAIL with an AAAA answer resolves; with single-request AAAA is never asked", async () => {
  await withServer(TABLE, async (s) => {
    const both = await resolve("half", opts(s.port));
    assert.deepEqual(both.result.addresses, ["fd00::5"]);
    const single = await resolve("half", opts(s.port, "options single-request\n"));
    assert.deepEqual(sent(single).slice(0, 3), [
      "A half.default.svc.cluster.local.",
      "A half.default.svc.cluster.local.",
      "A half.svc.cluster.local.",
    ]);
    assert.equal(single.result.resolved, false);
  });
});

test("a truncated reply: both queries again over TCP", async () => {
  await withServer(TABLE, async (s, seen) => {
    const t = await resolve("big", opts(s.port));
    assert.deepEqual(sent(t).slice(2), [
      "A big.default.svc.cluster.local. tcp",
      "AAAA big.default.svc.cluster.local. tcp",
    ]);
    assert.deepEqual(
      seen.map((q) => q.transport),
      ["udp", "udp", "tcp", "tcp"],
    );
    assert.deepEqual(t.result.addresses, ["10.0.1.1"]);
    assert.match(t.queries[0].note ?? "", /TCP/);
  });
});

test("use-vc: TCP from the start, one pass", async () => {
  await withServer(TABLE, async (s) => {
    const t = await resolve("web", opts(s.port, "options use-vc\n"));
    assert.deepEqual(sent(t), [
      "A web.default.svc.cluster.local. tcp",
      "AAAA web.default.svc.cluster.local. tcp",
    ]);
    assert.equal(t.result.resolved, true);
  });
});

test("a referral (empty, no AA or RA) moves on to the next server", async () => {
  await withServer(TABLE, async (lame) => {
    await withServer({ "lame.": { A: ["192.0.2.1"] } }, async (good) => {
      const o = opts(lame.port);
      o.servers!.push({ address: "127.0.0.1", port: good.port });
      const t = await resolve("lame.", o);
      assert.deepEqual(
        t.queries.map((q) => q.server),
        [
          `127.0.0.1:${lame.port}`,
          `127.0.0.1:${lame.port}`,
          `127.0.0.1:${good.port}`,
          `127.0.0.1:${good.port}`,
        ],
      );
      assert.equal(t.queries[0].note, "referral: next server");
      assert.deepEqual(t.result.addresses, ["192.0.2.1"]);
    });
  });
});

test("a closed port (ICMP refused): the walk ends at the first candidate, EAI_AGAIN", async () => {
  const probe = createSocket("udp4");
  await new Promise<void>((r) => probe.bind(0, "127.0.0.1", r));
  const port = probe.address().port;
  await new Promise<void>((r) => probe.close(() => r()));
  const t = await resolve("web", opts(port));
  assert.deepEqual(new Set(t.queries.map((q) => q.name)), new Set(["web.default.svc.cluster.local."]));
  assert.ok(t.queries.every((q) => q.note === "refused (ICMP)"));
  assert.equal(t.result.error, "EAI_AGAIN");
});

test("hosts mode: a walk of AAAA, then of A; CNAMEs become aliases", async () => {
  await withServer(TABLE, async (s) => {
    const v4 = await resolve("v4", opts(s.port, "", { mode: "hosts" }));
    assert.deepEqual(sent(v4), [
      "AAAA v4.default.svc.cluster.local.",
      "AAAA v4.svc.cluster.local.",
      "AAAA v4.cluster.local.",
      "AAAA v4.",
      "A v4.default.svc.cluster.local.",
    ]);
    assert.deepEqual(v4.result.addresses, ["10.0.0.2", "10.0.0.3"]);
    const alias = await resolve("alias", opts(s.port, "", { mode: "hosts" }));
    assert.equal(alias.result.canonicalName, "web.default.svc.cluster.local");
    assert.deepEqual(alias.result.aliases, ["alias.default.svc.cluster.local"]);
    assert.deepEqual(alias.result.addresses, ["fd00::1"]);
  });
});

test("no-aaaa: getaddrinfo asks A only; a lone AAAA query goes out as A and reads as NODATA", async () => {
  await withServer(TABLE, async (s) => {
    const a = await resolve("web", opts(s.port, "options no-aaaa\n"));
    assert.deepEqual(sent(a), ["A web.default.svc.cluster.local."]);
    assert.deepEqual(a.result.addresses, ["10.0.0.1"]);
    const h = await resolve("web", opts(s.port, "options no-aaaa\n", { mode: "hosts" }));
    assert.deepEqual(sent(h).slice(0, 5), [
      "A web.default.svc.cluster.local.",
      "A web.svc.cluster.local.",
      "A web.cluster.local.",
      "A web.",
      "A web.default.svc.cluster.local.",
    ]);
    assert.deepEqual(h.result.addresses, ["10.0.0.1"]);
  });
});

test("one type: res_search; resolved only with records of that type", async () => {
  await withServer(TABLE, async (s) => {
    const txt = await resolve("web", opts(s.port, "", { type: Type.TXT }));
    assert.equal(txt.queries.length, 4);
    assert.equal(txt.result.resolved, false);
    assert.equal(txt.result.herrno, "NO_DATA");
    const a = await resolve("v4", opts(s.port, "", { type: Type.A }));
    assert.deepEqual(a.result.records, [
      "v4.default.svc.cluster.local. 30 A 10.0.0.2",
      "v4.default.svc.cluster.local. 30 A 10.0.0.3",
    ]);
    assert.equal(a.result.resolved, true);
  });
});

test("address literals and unencodable names send nothing", async () => {
  await withServer(TABLE, async (s, seen) => {
    const lit = await resolve("10.1", opts(s.port));
    assert.deepEqual(lit.result.addresses, ["10.0.0.1"]);
    const bad = await resolve("a..b", opts(s.port));
    assert.equal(bad.queries.length, 0);
    assert.ok(bad.notSent.length > 0);
    assert.equal(bad.result.error, "EAI_NONAME");
    assert.equal(seen.length, 0);
  });
});

test("a name that is no host name (glibc's res_hnok) sends nothing: EAI_NONAME, HOST_NOT_FOUND", async () => {
  await withServer(TABLE, async (s, seen) => {
    // Without AI_IDN (most programs; getent ahosts sets it) a UTF-8 name is not converted to xn--.
    for (const name of ["bücher", "-web", "a*b", "a b", "a\\.b", "\\045web"]) {
      const t = await resolve(name, opts(s.port));
      assert.equal(t.result.error, "EAI_NONAME", name);
      assert.match(t.notSent[0]?.reason ?? "", /not a host name/, name);
      const h = await resolve(name, opts(s.port, "", { mode: "hosts" }));
      assert.equal(h.result.herrno, "HOST_NOT_FOUND", name);
    }
    // res_search has no such check.
    assert.equal((await resolve("a*b", opts(s.port, "", { type: Type.A }))).queries.length, 4);
    assert.deepEqual(
      seen.map((q) => q.name),
      ["a*b.default.svc.cluster.local.", "a*b.svc.cluster.local.", "a*b.cluster.local.", "a*b."],
    );
    // Underscores, an inner or final hyphen, and escapes of such octets are fine.
    const ok = await resolve("_http._tcp.w\\069b-", opts(s.port, "", { type: Type.A }));
    assert.equal(ok.notSent.length, 0);
  });
});

test("gethostbyname2 reads digits and dots only as an address, and sends nothing when they are none", async () => {
  await withServer(TABLE, async (s, seen) => {
    const hex = await resolve("0x7f.1", opts(s.port, "", { mode: "hosts" }));
    assert.equal(hex.queries.length, 8, "not an address to gethostbyname2: its search walk");
    assert.deepEqual((await resolve("0x7f.1", opts(s.port))).result.addresses, ["127.0.0.1"]);
    const five = await resolve("1.2.3.4.5", opts(s.port, "", { mode: "hosts" }));
    assert.equal(five.queries.length, 0);
    assert.equal(five.result.herrno, "HOST_NOT_FOUND");
    assert.deepEqual((await resolve("10", opts(s.port, "", { mode: "hosts" }))).result.addresses, [
      "0.0.0.10",
    ]);
    assert.equal(seen.length, 8);
  });
});
