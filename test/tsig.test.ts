// tsig end to end (RFC 8945): signed queries from dig -y and kdig -y checked and their replies signed
// (the clients verify them), a signed AXFR whose every message dig verifies, `require`, the error
// replies (BADKEY and BADSIG unsigned, BADTIME signed with the server's time), and secondary pulling
// a zone from Knot that demands the key, with Knot's signed NOTIFY.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digTransfer, digUntil } from "./helpers/dig.ts";
import { exchangeUdp } from "./helpers/udp-exchange.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { startKnot } from "./upstream/knot.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Rcode, Type } from "../src/dns/constants.ts";
import {
  FUDGE,
  TsigError,
  appendTsig,
  computeMac,
  macMatches,
  readTsig,
  tsigNow,
  tsigOffset,
  withoutTsig,
} from "../src/dns/tsig.ts";
import { queryMsg } from "./helpers/query-msg.ts";

const run = promisify(execFile);
const SECRET = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";
const ZONE = `$ORIGIN example.org.
$TTL 300
@ SOA ns hostmaster 1 3600 600 86400 60
@ NS ns
ns A 192.0.2.53
www A 192.0.2.1
`;

/** Enough records that a transfer takes several messages, each signed over the one before. */
const BULK = Array.from({ length: 600 }, (_, i) => `host-${i} A 10.0.${i >> 8}.${i & 255}\n`).join("");

let srv: RunningServer;
const stops: { stop(): Promise<unknown> }[] = [];
before(async () => {
  srv = await startServer(
    `example.org {
    tsig {
        secret transfer-key. ${SECRET}
        require AXFR IXFR
    }
    file example.org.zone
    transfer {
        to *
    }
}
`,
    { files: { "example.org.zone": ZONE + BULK } },
  );
  stops.push(srv);
});
after(async () => {
  for (const s of stops.reverse()) await s.stop();
});

test("tsig: dig and kdig signed queries are answered and the replies verify, with each HMAC", async () => {
  for (const alg of ["hmac-sha256", "hmac-sha512", "hmac-sha1", "hmac-md5"]) {
    const r = await dig(srv.port, "www.example.org", "A", "-y", `${alg}:transfer-key:${SECRET}`);
    assert.equal(r.status, "NOERROR", alg);
    assert.deepEqual(r.answer, ["www.example.org. 300 IN A 192.0.2.1"]);
    assert.match(r.text, new RegExp(`TSIG\\s+${alg}\\.`), alg);
    assert.doesNotMatch(r.text, /Couldn't verify|could not be validated/, alg);
  }
  // kdig reports a reply whose TSIG fails to verify on stderr, and exits 0.
  const { stdout, stderr } = await run("kdig", [
    "@127.0.0.1",
    "-p",
    String(srv.port),
    "-y",
    `hmac-sha384:transfer-key:${SECRET}`,
    "+tcp",
    "www.example.org",
  ]);
  assert.match(stdout, /status: NOERROR/);
  assert.match(stdout, /TSIG\s+hmac-sha384\. \d+ 300 48 \S+ \d+ NOERROR/);
  assert.doesNotMatch(stdout + stderr, /WARNING/);
  // Unsigned queries of types not required still get answers.
  assert.equal((await dig(srv.port, "www.example.org", "A")).status, "NOERROR");
});

test("tsig: a wrong secret is BADSIG, an unknown key BADKEY, both NOTAUTH and unsigned", async () => {
  const badSig = await dig(srv.port, "www.example.org", "A", "-y", `hmac-sha256:transfer-key:AAAA${SECRET}`);
  assert.equal(badSig.status, "NOTAUTH");
  assert.match(badSig.text, /TSIG\s+hmac-sha256\. \d+ 300 0 \d+ BADSIG 0/);
  assert.deepEqual(badSig.answer, []);
  const badKey = await dig(srv.port, "www.example.org", "A", "-y", `hmac-sha256:other-key:${SECRET}`);
  assert.equal(badKey.status, "NOTAUTH");
  assert.match(badKey.text, /BADKEY/);
});

test("tsig: a time outside the fudge is BADTIME, signed, with the server's time in Other Data", async () => {
  const key = { name: "transfer-key.", algorithm: "hmac-sha256.", secret: Buffer.from(SECRET, "base64") };
  const query = encode(queryMsg("www.example.org.", Type.A, { id: 4242 }));
  const t = { timeSigned: tsigNow() - 3600, fudge: FUDGE, error: 0, other: Buffer.alloc(0) };
  const mac = computeMac({ key, message: query, ...t });
  const reply = await exchangeUdp(srv.port, appendTsig(query, { ...t, key, mac, originalId: 4242 }));
  assert.ok(reply);
  assert.equal(decode(reply).rcode, Rcode.NOTAUTH);
  const at = tsigOffset(reply);
  const rec = readTsig(reply, at);
  assert.equal(rec.error, TsigError.BADTIME);
  assert.equal(rec.timeSigned, t.timeSigned);
  assert.ok(Math.abs(rec.other.readUIntBE(0, 6) - tsigNow()) < 5, "Other Data holds the server's time");
  const check = { key, message: withoutTsig(reply, at, rec.originalId), prior: mac, ...rec };
  assert.ok(macMatches(rec.mac, check), "the BADTIME reply is signed over the request's MAC");
});

test("tsig: a signed AXFR verifies message by message; an unsigned one is REFUSED (require)", async () => {
  const { stdout } = await run("dig", [
    "@127.0.0.1",
    "-p",
    String(srv.port),
    "example.org",
    "AXFR",
    "-y",
    `hmac-sha256:transfer-key:${SECRET}`,
  ]);
  const size = /XFR size: (\d+) records \(messages (\d+)/.exec(stdout);
  assert.deepEqual(size?.slice(1).map(Number)[0], 605);
  assert.ok(Number(size![2]) > 1, `${size![2]} messages`);
  assert.doesNotMatch(stdout, /Couldn't verify|could not be validated|Transfer failed/);
  const k = await run("kdig", [
    "@127.0.0.1",
    "-p",
    String(srv.port),
    "-y",
    `hmac-sha256:transfer-key:${SECRET}`,
    "example.org",
    "AXFR",
  ]);
  assert.match(k.stdout, /Received \d+ B \(\d+ messages, 605 records\)/);
  assert.doesNotMatch(k.stdout + k.stderr, /;; (WARNING|ERROR)/);
  assert.ok((await digTransfer(srv.port, "example.org")).failed, "unsigned AXFR refused");
});

test("tsig: secondary pulls from Knot with the key and takes Knot's signed NOTIFY; a wrong key fails", async () => {
  const port = await freeUdpTcpPort();
  const key = { name: "transfer-key", algorithm: "hmac-sha256", secret: SECRET };
  const knot = await startKnot({
    zone: { origin: "example.org.", text: ZONE },
    conf: { key, notifyPorts: [port], journal: true, control: true },
  });
  stops.push(knot);
  // Knot refuses an unsigned transfer: the key is what lets the secondary in.
  assert.equal((await digTransfer(knot.port, "example.org")).failed, true);
  const corefile = (secret: string) => `example.org {
    tsig {
        secret transfer-key. ${secret}
    }
    secondary {
        transfer from 127.0.0.1:${knot.port}
    }
}
`;
  const sec = await startServer(corefile(SECRET), { args: ["-dns.port", String(port)] });
  stops.push(sec);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  await knot.knotc("zone-begin", "example.org");
  await knot.knotc("zone-set", "example.org", "signed", "300", "A", "192.0.2.77");
  await knot.knotc("zone-commit", "example.org");
  await digUntil(port, "signed.example.org", "A", ["signed.example.org. 300 IN A 192.0.2.77"]);
  assert.ok(
    sec.logs.some((l) => String(l.msg).startsWith("NOTIFY received")),
    "Knot's signed NOTIFY was taken",
  );

  const wrong = await startServer(corefile(Buffer.from("another secret!!").toString("base64")));
  stops.push(wrong);
  assert.equal((await dig(wrong.port, "www.example.org", "A")).status, "SERVFAIL");
  await waitFor(() => wrong.logs.some((l) => JSON.stringify(l.errors ?? "").includes("BADSIG")));
});

async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), "not seen in 5 s");
}
