// The etcd plugin against Debian's real etcd (etcd-server): SkyDNS records written with etcdctl,
// asked with dig through a real clusterdns.

import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import type { EtcdServer } from "./helpers/etcd.ts";
import type { RunningServer } from "./helpers/server.ts";
import { startEtcd } from "./helpers/etcd.ts";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { freePort } from "./helpers/free-port.ts";
import { createServer, type Server, type Socket } from "node:net";
import { once } from "node:events";

let etcd: EtcdServer;
let server: RunningServer;
/** Takes connections and never answers: an etcd that hangs. */
let silent: Server;
const silentSockets: Socket[] = [];

const RECORDS: [string, object][] = [
  ["/skydns/local/skydns/a", { host: "10.0.0.1", ttl: 60 }],
  ["/skydns/local/skydns/b", { host: "2001:db8::1" }],
  ["/skydns/local/skydns/c", { host: "a.skydns.local" }],
  ["/skydns/local/skydns/ext", { host: "outside.example" }],
  ["/skydns/local/skydns/t", { text: "hello world", ttl: 30 }],
  ["/skydns/local/skydns/multi/x1", { host: "10.0.1.1" }],
  ["/skydns/local/skydns/multi/x2", { host: "10.0.1.2" }],
  ["/skydns/local/skydns/svc/_tcp/_http/s1", { host: "10.0.0.5", port: 80 }],
  ["/skydns/local/skydns/svc/_tcp/_http/s2", { host: "a.skydns.local", port: 8080, priority: 20 }],
  ["/skydns/local/skydns/mx/m1", { host: "10.0.0.9", mail: true, priority: 5 }],
  ["/skydns/local/skydns/bad", { host: "10.0.0.7", ttl: "60" }],
  ["/skydns/arpa/in-addr/10/0/0/1", { host: "a.skydns.local" }],
  ["/skydns/local/skydns/dns/ns/ns1", { host: "10.0.0.53" }],
  ["/skydns/local/skydns/grp/g1", { host: "10.0.3.1", group: "g1" }],
  ["/skydns/local/skydns/grp/sub/g2", { host: "10.0.3.2", group: "g2" }],
  ["/skydns/local/skydns/grp/sub/none", { host: "10.0.3.3" }],
];

before(async () => {
  etcd = await startEtcd();
  for (const [k, v] of RECORDS) await etcd.put(k, JSON.stringify(v));
  const closed = await freePort();
  // Reads what comes (so the client closing is seen) and never answers.
  silent = createServer((sock) => {
    silentSockets.push(sock);
    sock.resume();
  });
  silent.listen(0, "127.0.0.1");
  await once(silent, "listening");
  const silentPort = (silent.address() as { port: number }).port;
  server = await startServer(
    `skydns.local 0.0.10.in-addr.arpa {
    etcd skydns.local 10.0.0.0/24 {
        path /skydns
        endpoint ${etcd.url}
    }
}
ft.local {
    etcd {
        endpoint ${etcd.url}
        fallthrough
    }
    whoami
}
auth.local {
    etcd {
        endpoint ${etcd.url}
        credentials root s3cret
    }
}
hung.local {
    cancel 300ms
    etcd {
        endpoint http://127.0.0.1:${silentPort}
    }
}
down.local {
    etcd {
        endpoint http://127.0.0.1:${closed}
    }
}
`,
  );
});

after(async () => {
  for (const sock of silentSockets) sock.destroy();
  silent?.close();
  await server?.stop();
  await etcd?.stop();
});

test("A, AAAA and the whole subtree of a name, from etcd, with the record's TTL or 300", async () => {
  const a = await dig(server.port, "a.skydns.local", "A");
  assert.equal(a.status, "NOERROR");
  assert.ok(a.flags.includes("aa"));
  assert.deepEqual(a.answer, ["a.skydns.local. 60 IN A 10.0.0.1"]);
  const aaaa = await dig(server.port, "b.skydns.local", "AAAA");
  assert.deepEqual(aaaa.answer, ["b.skydns.local. 300 IN AAAA 2001:db8::1"]);
  const multi = await dig(server.port, "multi.skydns.local", "A");
  assert.deepEqual(multi.answer.sort(), [
    "multi.skydns.local. 300 IN A 10.0.1.1",
    "multi.skydns.local. 300 IN A 10.0.1.2",
  ]);
});

test("a host that is a name is a CNAME, chased inside the zone", async () => {
  const r = await dig(server.port, "c.skydns.local", "A");
  assert.deepEqual(r.answer, [
    "c.skydns.local. 300 IN CNAME a.skydns.local.",
    "a.skydns.local. 60 IN A 10.0.0.1",
  ]);
  // Outside the zone the server itself is asked; this block has nothing that answers it, so the CNAME
  // comes alone, as CoreDNS sends it when its upstream has no answer.
  const ext = await dig(server.port, "ext.skydns.local", "A");
  assert.equal(ext.status, "NOERROR");
  assert.deepEqual(ext.answer, ["ext.skydns.local. 300 IN CNAME outside.example."]);
  const c = await dig(server.port, "c.skydns.local", "CNAME");
  assert.deepEqual(c.answer, ["c.skydns.local. 300 IN CNAME a.skydns.local."]);
});

test("SRV: an address target is named after its key and comes with its address; weights per priority", async () => {
  const r = await dig(server.port, "_http._tcp.svc.skydns.local", "SRV");
  assert.equal(r.status, "NOERROR");
  assert.deepEqual(r.answer.sort(), [
    "_http._tcp.svc.skydns.local. 300 IN SRV 10 100 80 s1._http._tcp.svc.skydns.local.",
    "_http._tcp.svc.skydns.local. 300 IN SRV 20 100 8080 a.skydns.local.",
  ]);
  assert.deepEqual(r.additional.sort(), [
    "a.skydns.local. 60 IN A 10.0.0.1",
    "s1._http._tcp.svc.skydns.local. 300 IN A 10.0.0.5",
  ]);
});

test("TXT, MX and PTR", async () => {
  const t = await dig(server.port, "t.skydns.local", "TXT");
  assert.deepEqual(t.answer, ['t.skydns.local. 30 IN TXT "hello world"']);
  const mx = await dig(server.port, "mx.skydns.local", "MX");
  assert.deepEqual(mx.answer, ["mx.skydns.local. 300 IN MX 5 m1.mx.skydns.local."]);
  assert.deepEqual(mx.additional, ["m1.mx.skydns.local. 300 IN A 10.0.0.9"]);
  const ptr = await dig(server.port, "1.0.0.10.in-addr.arpa", "PTR");
  assert.deepEqual(ptr.answer, ["1.0.0.10.in-addr.arpa. 300 IN PTR a.skydns.local."]);
});

test("NS at the apex: the addresses under ns.dns, named after their keys", async () => {
  const r = await dig(server.port, "skydns.local", "NS");
  assert.deepEqual(r.answer, ["skydns.local. 300 IN NS ns1.ns.dns.skydns.local."]);
  assert.deepEqual(r.additional, ["ns1.ns.dns.skydns.local. 300 IN A 10.0.0.53"]);
});

test("NXDOMAIN for a name etcd has no key for, NODATA for one it has without that type; both with the SOA", async () => {
  const nx = await dig(server.port, "nope.skydns.local", "A");
  assert.equal(nx.status, "NXDOMAIN");
  assert.equal(nx.answer.length, 0);
  assert.match(
    nx.authority[0] ?? "",
    /^skydns\.local\. 30 IN SOA ns\.dns\.skydns\.local\. hostmaster\.skydns\.local\. \d+ 7200 1800 86400 30$/,
  );
  const nodata = await dig(server.port, "b.skydns.local", "A");
  assert.equal(nodata.status, "NOERROR");
  assert.equal(nodata.answer.length, 0);
  assert.match(nodata.authority[0] ?? "", / IN SOA /);
  const other = await dig(server.port, "a.skydns.local", "HINFO");
  assert.equal(other.status, "NOERROR");
  assert.equal(other.answer.length, 0);
});

test("each query reads etcd: a change is answered at once, twice in a row", async () => {
  await etcd.put("/skydns/local/skydns/live", JSON.stringify({ host: "10.0.2.1" }));
  assert.deepEqual((await dig(server.port, "live.skydns.local", "A")).answer, [
    "live.skydns.local. 300 IN A 10.0.2.1",
  ]);
  await etcd.put("/skydns/local/skydns/live", JSON.stringify({ host: "10.0.2.2" }));
  assert.deepEqual((await dig(server.port, "live.skydns.local", "A")).answer, [
    "live.skydns.local. 300 IN A 10.0.2.2",
  ]);
  await etcd.del("/skydns/local/skydns/live");
  assert.equal((await dig(server.port, "live.skydns.local", "A")).status, "NXDOMAIN");
});

test("a record that does not decode (ttl as a string) is SERVFAIL, as in CoreDNS", async () => {
  assert.equal((await dig(server.port, "bad.skydns.local", "A")).status, "SERVFAIL");
});

test("fallthrough: a name etcd does not have goes on to the next plugin", async () => {
  const r = await dig(server.port, "nope.ft.local", "A");
  assert.equal(r.status, "NOERROR");
  assert.ok(
    r.additional.some((l) => l.includes("127.0.0.1")),
    r.text,
  );
});

test("etcd unreachable: SERVFAIL, promptly, and the server keeps serving", async () => {
  // Refused at once: a reply within dig's 3 s wait.
  const r = await dig(server.port, "x.down.local", "A");
  assert.equal(r.status, "SERVFAIL");
  assert.equal((await dig(server.port, "a.skydns.local", "A")).status, "NOERROR");
});

test("an etcd that hangs: the read stops at cancel's deadline, not etcd's 5 s timeout", async () => {
  const t0 = performance.now();
  assert.equal((await dig(server.port, "x.hung.local", "A")).status, "SERVFAIL");
  const sock = silentSockets.at(-1);
  assert.ok(sock, "the plugin connected to the silent etcd");
  if (!sock.closed) await once(sock, "close");
  // Without the deadline the request would stay open for the 5 s timeout.
  assert.ok(performance.now() - t0 < 4000, `closed after ${Math.round(performance.now() - t0)} ms`);
});

test("a wildcard label matches any label at its place", async () => {
  const r = await dig(server.port, "*.multi.skydns.local", "A");
  assert.deepEqual(r.answer.sort(), [
    "*.multi.skydns.local. 300 IN A 10.0.1.1",
    "*.multi.skydns.local. 300 IN A 10.0.1.2",
  ]);
});

test("groups: the nearest records' group and the records without one answer", async () => {
  const r = await dig(server.port, "grp.skydns.local", "A");
  assert.deepEqual(r.answer.sort(), [
    "grp.skydns.local. 300 IN A 10.0.3.1",
    "grp.skydns.local. 300 IN A 10.0.3.3",
  ]);
});

test("a key with a lease answers with the lease's time left when that is lower than its TTL", async () => {
  const id = await etcd.lease(100);
  await etcd.put("/skydns/local/skydns/leased/l1", JSON.stringify({ host: "10.0.4.1" }), id);
  await etcd.put("/skydns/local/skydns/leased/l2", JSON.stringify({ host: "10.0.4.2", ttl: 50 }), id);
  const r = await dig(server.port, "leased.skydns.local", "A");
  const ttls = new Map(r.answer.map((l) => [l.split(" ")[4], Number(l.split(" ")[1])]));
  assert.ok(ttls.get("10.0.4.1")! > 50 && ttls.get("10.0.4.1")! <= 100, r.answer.join("\n"));
  assert.equal(ttls.get("10.0.4.2"), 50);
});

test("credentials: etcd with authentication on is read with the user's token", async () => {
  await etcd.put("/skydns/local/auth/w", JSON.stringify({ host: "10.0.5.1" }));
  await etcd.enableAuth("root", "s3cret");
  assert.deepEqual((await dig(server.port, "w.auth.local", "A")).answer, ["w.auth.local. 300 IN A 10.0.5.1"]);
  // A block without credentials is now refused by etcd: SERVFAIL.
  assert.equal((await dig(server.port, "a.skydns.local", "A")).status, "SERVFAIL");
});

test("etcd stopped under a running server: SERVFAIL, not a crash", async () => {
  await etcd.stop();
  assert.equal((await dig(server.port, "a.skydns.local", "A")).status, "SERVFAIL");
  assert.equal(server.proc.exitCode, null);
});
