import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import { udpExchange } from "./udp-exchange.ts";
import { newQuery, replyTo } from "../dns/message.ts";
import { encode } from "../dns/encode.ts";
import { decode } from "../dns/decode.ts";
import { Rcode, Type } from "../dns/constants.ts";

/** A UDP server on loopback that answers each query with what `answer` makes of it, in order. */
async function server(answer: (q: ReturnType<typeof decode>) => Buffer[]) {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  sock.on("message", (buf, rinfo) => {
    for (const pkt of answer(decode(buf))) sock.send(pkt, rinfo.port, rinfo.address);
  });
  return { port: (sock.address() as AddressInfo).port, close: () => sock.close() };
}

test("udpExchange resolves undefined when nothing answers", async () => {
  const quiet = await server(() => []);
  try {
    const q = newQuery("x.test.", Type.A, 1, 7);
    assert.equal(await udpExchange("127.0.0.1", quiet.port, q, 50), undefined);
  } finally {
    quiet.close();
  }
});

test("udpExchange skips packets that do not answer the query and takes the one that does", async () => {
  const s = await server((q) => {
    const wrongId = replyTo({ ...q, id: (q.id + 1) & 0xffff }, Rcode.REFUSED);
    const wrongName = replyTo(q, Rcode.REFUSED);
    wrongName.question = [{ ...q.question[0], name: "y.test." }];
    const right = replyTo(q, Rcode.NXDOMAIN);
    // 0x20: the reply's spelling of the name may differ from the query's.
    right.question = [{ ...q.question[0], name: "X.Test." }];
    return [encode(wrongId), encode(wrongName), encode(right)];
  });
  try {
    const reply = await udpExchange("127.0.0.1", s.port, newQuery("x.TEST.", Type.A, 1, 4242), 5000);
    assert.equal(reply?.rcode, Rcode.NXDOMAIN);
    assert.equal(reply?.id, 4242);
  } finally {
    s.close();
  }
});
