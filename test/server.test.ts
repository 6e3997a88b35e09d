// The server end to end: a real clusterdns process on loopback, asked with dig and with dns2's client,
// over UDP and TCP.

import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import dns2 from "dns2";
import { startServer, ROOT, type RunningServer } from "./helpers/server.ts";
import { UDP_ENGINES, engineArgs } from "./helpers/engines.ts";
import { dig } from "./helpers/dig.ts";
import { exchangeUdp as exchangeWith } from "./helpers/udp-exchange.ts";
import { queryMsg } from "./helpers/query-msg.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Rcode, Type } from "../src/dns/constants.ts";

const COREFILE = `example.org {
    file ${ROOT}/zones/example.org.zone
}
whoami.test {
    whoami
}
`;

for (const engine of UDP_ENGINES) {
  describe(`UDP engine ${engine}`, () => {
    let srv: RunningServer;
    before(async () => {
      srv = await startServer(COREFILE, { args: engineArgs(engine) });
    });
    after(async () => {
      assert.equal(await srv.stop(), 0, "clusterdns exits 0 on SIGTERM");
    });

    test("SOA at the apex is authoritative, over UDP and TCP", async () => {
      for (const opt of ["+notcp", "+tcp"]) {
        const r = await dig(srv.port, "example.org", "SOA", opt);
        assert.equal(r.status, "NOERROR");
        assert.ok(r.flags.includes("aa"), `aa set (${opt})`);
        assert.equal(r.answer.length, 1);
        assert.match(r.answer[0], /^example\.org\. \d+ IN SOA /);
      }
    });

    test("the client's spelling of the name is echoed (0x20), also from the answer cache", async () => {
      for (let i = 0; i < 3; i++) {
        const r = await dig(srv.port, "WwW.ExAmPlE.oRg", "A");
        assert.equal(r.status, "NOERROR");
        assert.match(r.text, /;WwW\.ExAmPlE\.oRg\.\s+IN\s+A/);
        assert.ok(r.answer.length > 0);
      }
    });

    test("an answer over 512 bytes: TC over UDP without EDNS, whole over TCP and with a 4096 buffer", async () => {
      const plain = await dig(srv.port, "big.example.org", "A", "+noedns", "+ignore");
      assert.ok(plain.flags.includes("tc"), "TC set");
      assert.ok(plain.size <= 512, `reply of ${plain.size} bytes fits 512`);
      const tcp = await dig(srv.port, "big.example.org", "A", "+tcp");
      assert.ok(!tcp.flags.includes("tc"));
      assert.ok(tcp.answer.length >= 30, `${tcp.answer.length} records over TCP`);
      const edns = await dig(srv.port, "big.example.org", "A", "+bufsize=4096");
      assert.ok(!edns.flags.includes("tc"));
      assert.equal(edns.answer.length, tcp.answer.length);
      assert.ok(edns.size > 512);
      assert.match(edns.text, /EDNS: version: 0, flags:; udp: 1232/);
    });

    test("NXDOMAIN and NODATA carry the SOA", async () => {
      const nx = await dig(srv.port, "nope.example.org", "A");
      assert.equal(nx.status, "NXDOMAIN");
      assert.match(nx.authority[0], / IN SOA /);
      const nodata = await dig(srv.port, "www.example.org", "MX");
      assert.equal(nodata.status, "NOERROR");
      assert.equal(nodata.answer.length, 0);
      assert.match(nodata.authority[0], / IN SOA /);
    });

    test("a zone no server block serves is REFUSED", async () => {
      const r = await dig(srv.port, "example.com", "A");
      assert.equal(r.status, "REFUSED");
    });

    test("dns2's client gets the same answers over UDP and TCP", async () => {
      const udp = dns2.UDPClient({ dns: "127.0.0.1", port: srv.port, timeout: 3000, retryOverTCP: false });
      const tcp = dns2.TCPClient({ dns: "127.0.0.1", port: srv.port });
      for (const ask of [udp, tcp]) {
        const r = await ask("www.example.org", "A");
        assert.equal(r.header.aa, 1);
        assert.ok(r.answers.length > 0);
        for (const a of r.answers as { address?: string }[]) assert.ok(a.address, "A record with an address");
      }
      const tc = await udp("big.example.org", "A");
      assert.equal(tc.header.tc, 1);
    });

    test("whoami answers with the client's address and port, never from the cache", async () => {
      const a = await dig(srv.port, "whoami.test", "A");
      const b = await dig(srv.port, "whoami.test", "A");
      assert.ok(a.additional.some((l) => / IN A 127\.0\.0\.1$/.test(l)));
      const portOf = (r: typeof a) => r.additional.find((l) => / IN SRV /.test(l))?.split(" ")[6];
      assert.ok(portOf(a) && portOf(b));
      assert.notEqual(portOf(a), portOf(b), "each dig uses a new source port, so each answer differs");
    });

    const exchangeUdp = (query: Buffer, timeoutMs?: number, host?: string) =>
      exchangeWith(srv.port, query, timeoutMs, host);

    test("over IPv6: answers, whoami sees ::1, TC and sizes as over IPv4", async (t) => {
      if (srv.logs.some((l) => /IPv6 is not available/.test(String(l.msg)))) return t.skip("no IPv6 here");
      const www = decode((await exchangeUdp(encode(queryMsg("www.example.org.", Type.A)), 1000, "::1"))!);
      assert.equal(www.rcode, Rcode.NOERROR);
      assert.ok(www.answer.length > 0);
      const who = decode((await exchangeUdp(encode(queryMsg("whoami.test.", Type.A)), 1000, "::1"))!);
      assert.ok(
        who.additional.some(
          (rr) => rr.type === Type.AAAA && "address" in rr.data && rr.data.address === "::1",
        ),
        "the client's address, as dgram spells it",
      );
      const big = await exchangeUdp(encode(queryMsg("big.example.org.", Type.A)), 1000, "::1");
      assert.equal(big![2] & 0x02, 0x02, "TC without EDNS");
      assert.ok(big!.length <= 512);
      const edns = encode(
        queryMsg("big.example.org.", Type.A, { edns: { udpSize: 4096, version: 0, do: false, options: [] } }),
      );
      const whole = await exchangeUdp(edns, 1000, "::1");
      assert.equal(whole![2] & 0x02, 0, "no TC with a 4096 buffer");
      assert.ok(whole!.length > 512 && whole!.length <= 1232, `${whole!.length} bytes: at most 1232`);
    });

    test("bad queries get the rcode the RFCs ask for, or no answer at all", async () => {
      const notimp = await exchangeUdp(encode(queryMsg("example.org.", Type.A, { opcode: 2 })));
      assert.equal(decode(notimp!).rcode, Rcode.NOTIMP);

      const twoQuestions = queryMsg("example.org.", Type.A);
      twoQuestions.question.push({ name: "www.example.org.", type: Type.A, class: 1 });
      const formerr = await exchangeUdp(encode(twoQuestions));
      assert.equal(decode(formerr!).rcode, Rcode.FORMERR);
      assert.equal(decode(formerr!).id, 0x1234);

      const badvers = await exchangeUdp(
        encode(
          queryMsg("example.org.", Type.A, { edns: { udpSize: 4096, version: 1, do: false, options: [] } }),
        ),
      );
      assert.equal(decode(badvers!).rcode, Rcode.BADVERS);

      const chaosClass = await exchangeUdp(
        encode(queryMsg("example.org.", Type.A, { question: [{ name: "example.org.", type: 1, class: 4 }] })),
      );
      assert.equal(decode(chaosClass!).rcode, Rcode.NOTIMP);

      const response = encode({ ...queryMsg("example.org.", Type.A), qr: true });
      assert.equal(await exchangeUdp(response, 300), undefined, "a response is never answered");
      assert.equal(await exchangeUdp(Buffer.from([1, 2, 3]), 300), undefined, "a runt is dropped");
    });

    test("TCP: pipelined queries on one connection all get answers", async () => {
      const names = [
        "www.example.org.",
        "example.org.",
        "nope.example.org.",
        "big.example.org.",
        "web.example.org.",
      ];
      const sock = net.connect(srv.port, "127.0.0.1");
      const frames = Buffer.concat(
        names.map((n, i) => {
          const q = encode(queryMsg(n, Type.A, { id: 100 + i }));
          const len = Buffer.alloc(2);
          len.writeUInt16BE(q.length);
          return Buffer.concat([len, q]);
        }),
      );
      sock.write(frames);
      const ids = await new Promise<number[]>((resolve, reject) => {
        let buf = Buffer.alloc(0);
        const got: number[] = [];
        const timer = setTimeout(() => reject(new Error(`only ${got.length} replies`)), 5000);
        sock.on("data", (d) => {
          buf = Buffer.concat([buf, d]);
          while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
            got.push(decode(buf.subarray(2, 2 + buf.readUInt16BE(0))).id);
            buf = buf.subarray(2 + buf.readUInt16BE(0));
          }
          if (got.length === names.length) {
            clearTimeout(timer);
            resolve(got);
          }
        });
      });
      sock.destroy();
      assert.deepEqual([...ids].sort(), [100, 101, 102, 103, 104]);
    });
  });
}
