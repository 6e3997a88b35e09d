// Zone transfers end to end: a clusterdns process serving a generated cluster (the benchmark's, from
// an objects file) and a zone file, transferred with dig over TCP, and checked against Knot DNS
// serving the benchmark's RFC 1035 zone of the same cluster: the two AXFRs must hold the same records.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import net from "node:net";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { digTransfer } from "./helpers/dig.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { generateCluster } from "../bench/cluster-gen.ts";
import type { Msg } from "../src/dns/message.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Rcode, Type } from "../src/dns/constants.ts";
import { parseRRText, rrToText } from "../src/dns/text.ts";
import { FrameReader, tcpFrame } from "../src/dns/tcp-frames.ts";
import { queryMsg } from "./helpers/query-msg.ts";

const cluster = generateCluster({ services: 400, seed: 7 });

// The zone file as Knot serves it, with clusterdns's TTL on the NS and on ns.dns's address, which
// clusterdns takes from its own pod's address (POD_IP below, as the Deployment passes it): the
// generated objects have no Service that selects it.
const knotZone = cluster.zone
  .replace(/^@ 30 IN NS /m, "@ 5 IN NS ")
  .replace(/^ns\.dns 30 /m, "ns.dns 5 ")
  // The benchmark's zone holds what the answers hold; a transfer is CoreDNS's: a service's own SRV
  // records only for a cluster IP service, all of weight 100 (kubernetes/xfr.ts).
  .replace(
    /^(([^_\s]\S*)\.svc\.cluster\.local\. \d+ IN SRV 0) \d+ (\d+) (\S+)\n/gm,
    (_, head, base, port, target) =>
      target === `${base}.svc.cluster.local.` ? `${head} 100 ${port} ${target}\n` : "",
  );

const NET_ZONE = `$ORIGIN example.net.
$TTL 300
@ SOA ns.example.net. hostmaster.example.net. 42 3600 600 86400 60
@ NS ns
ns A 192.0.2.53
www A 192.0.2.80
www AAAA 2001:db8::80
*.apps CNAME www
_http._tcp SRV 0 10 80 www
`;

const COREFILE = `cluster.local example.org {
    transfer cluster.local {
        to 127.0.0.1
    }
    transfer example.org {
        to 10.9.9.9 192.0.2.0/24
    }
    kubernetes cluster.local {
        objects objects.json
    }
    file example.org.zone example.org
}
example.net {
    transfer {
        to *
    }
    file example.net.zone
}
`;

let srv: RunningServer;
let knot: Knot;

before(async () => {
  srv = await startServer(COREFILE, {
    env: { POD_IP: "10.96.0.10" },
    files: {
      "objects.json": JSON.stringify({ kind: "List", apiVersion: "v1", items: cluster.objects }),
      "example.org.zone": NET_ZONE.replaceAll("example.net", "example.org"),
      "example.net.zone": NET_ZONE,
    },
  });
  knot = await startKnot({ zone: { origin: "cluster.local.", text: knotZone } });
  // The kubernetes store syncs right after start; a transfer before that is SERVFAIL.
  for (let i = 0; i < 200 && !srv.logs.some((l) => l.msg === "synced"); i++) await sleep(25);
});

after(async () => {
  await srv?.stop();
  await knot?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const canonicalText = (line: string) => rrToText(parseRRText(line));
const isSoa = (line: string) => / IN SOA /.test(line);

test("dig AXFR gets the cluster zone over TCP: SOA first and last, in several messages under 64 KiB", async () => {
  const x = await digTransfer(srv.port, "cluster.local", "AXFR");
  assert.ok(!x.failed);
  assert.ok(isSoa(x.records[0]) && x.records.at(-1) === x.records[0]);
  assert.equal(x.records.filter(isSoa).length, 2);
  assert.ok(x.records.length > 2000, `${x.records.length} records`);
  assert.ok(x.messages > 2, `${x.messages} messages`);
  // Every message has its 2-octet length: none can be over 65535; on average they are well under.
  assert.ok(x.bytes / x.messages < 65535);
});

test("the transfer holds the same records as Knot serving the benchmark's zone of the same cluster", async () => {
  const ours = await digTransfer(srv.port, "cluster.local", "AXFR");
  const theirs = await digTransfer(knot.port, "cluster.local", "AXFR");
  assert.ok(!theirs.failed, "Knot sends the zone");
  const set = (x: typeof ours) =>
    x.records
      .filter((l) => !isSoa(l))
      .map(canonicalText)
      .sort();
  const a = set(ours);
  const b = set(theirs);
  const missing = b.filter((l) => !a.includes(l));
  const extra = a.filter((l) => !b.includes(l));
  assert.deepEqual({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }, { missing: [], extra: [] });
  assert.equal(a.length, b.length);
});

test("IXFR: the single SOA for a current serial, the whole zone for an older one", async () => {
  const axfr = await digTransfer(srv.port, "cluster.local", "AXFR");
  const serial = Number(axfr.records[0].split(" ")[6]);
  const current = await digTransfer(srv.port, "cluster.local", `IXFR=${serial}`);
  assert.deepEqual(current.records, [axfr.records[0]]);
  const older = await digTransfer(srv.port, "cluster.local", `IXFR=${serial - 1}`);
  assert.deepEqual(older.records, axfr.records);
  // Over UDP the zone never fits: the current SOA tells the client to ask over TCP (RFC 1995 2).
  const q = queryMsg("cluster.local.", Type.IXFR);
  q.authority = [parseRRText(`cluster.local. 0 IN SOA . . ${serial - 1} 0 0 0 0`)];
  const udp = await exchangeUdp(q);
  assert.equal(udp.rcode, Rcode.NOERROR);
  assert.deepEqual(udp.answer.map(rrToText), [canonicalText(axfr.records[0])]);
});

test("a file zone transfers whole, in canonical order after its apex", async () => {
  const x = await digTransfer(srv.port, "example.net", "AXFR");
  assert.deepEqual(
    x.records.map(canonicalText),
    [
      "example.net. 300 IN SOA ns.example.net. hostmaster.example.net. 42 3600 600 86400 60",
      "example.net. 300 IN NS ns.example.net.",
      "_http._tcp.example.net. 300 IN SRV 0 10 80 www.example.net.",
      "*.apps.example.net. 300 IN CNAME www.example.net.",
      "ns.example.net. 300 IN A 192.0.2.53",
      "www.example.net. 300 IN A 192.0.2.80",
      "www.example.net. 300 IN AAAA 2001:db8::80",
      "example.net. 300 IN SOA ns.example.net. hostmaster.example.net. 42 3600 600 86400 60",
    ].map(canonicalText),
  );
});

test("REFUSED for a client 'to' does not list, and for AXFR over UDP; NOTAUTH below the apex", async () => {
  assert.equal((await digTransfer(srv.port, "example.org", "AXFR")).failed, true);
  const [refused] = await exchangeTcp(queryMsg("example.org.", Type.AXFR));
  assert.equal(refused.rcode, Rcode.REFUSED);
  assert.equal((await exchangeUdp(queryMsg("cluster.local.", Type.AXFR))).rcode, Rcode.REFUSED);
  const [notauth] = await exchangeTcp(queryMsg("svc.cluster.local.", Type.AXFR));
  assert.equal(notauth.rcode, Rcode.NOTAUTH);
  // The connection stays usable: a transfer after the refusals goes through.
  const msgs = await exchangeTcp(queryMsg("example.net.", Type.AXFR));
  assert.equal(msgs.flatMap((m) => m.answer).length, 8);
});

test("the transfer is logged with its zone, client, serial and size", () => {
  const line = srv.logs.find((l) => l.msg === "outgoing transfer" && l.zone === "cluster.local.");
  assert.ok(line, "an 'outgoing transfer' line");
  assert.equal(line.client, "127.0.0.1");
  assert.ok((line.records as number) > 2000 && (line.messages as number) > 2);
});

function exchangeUdp(q: Msg): Promise<Msg> {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket("udp4");
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error("no UDP answer"));
    }, 3000);
    sock.on("message", (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(decode(m));
    });
    sock.send(encode(q), srv.port, "127.0.0.1");
  });
}

/** Sends one query over TCP and reads messages until the transfer's closing SOA or an error rcode. */
function exchangeTcp(q: Msg): Promise<Msg[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(srv.port, "127.0.0.1");
    const msgs: Msg[] = [];
    const reader = new FrameReader();
    let soas = 0;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no end of the transfer after ${msgs.length} messages`));
    }, 5000);
    sock.on("data", (chunk: Buffer) =>
      reader.push(chunk, (f) => {
        const m = decode(f);
        msgs.push(m);
        soas += m.answer.filter((rr) => rr.type === Type.SOA).length;
        if (m.rcode !== Rcode.NOERROR || soas >= 2) {
          clearTimeout(timer);
          sock.destroy();
          resolve(msgs);
          return false;
        }
      }),
    );
    sock.on("error", reject);
    sock.write(tcpFrame(encode(q)));
  });
}
