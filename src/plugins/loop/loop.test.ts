import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import type { Handler } from "../../chain/handler.ts";
import type { Exchange } from "../../client/udp-exchange.ts";
import { Loop, LoopError } from "./loop.ts";
import { udpExchange } from "../../client/udp-exchange.ts";
import { setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { freePort } from "../../../test/helpers/free-port.ts";
import { startFailure, startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { replyTo } from "../../dns/message.ts";
import { encode } from "../../dns/encode.ts";
import { decode } from "../../dns/decode.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const AT = { address: "127.0.0.1", port: 53 };

/** A Loop whose probe goes straight into its own handler; `upstream` is what the handler passes to. */
function looped(upstream: (exchange: Exchange) => Handler) {
  const f = fakeContext();
  let hops = 0;
  const exchange: Exchange = async (_host, _port, q) => {
    if (++hops > 20) throw new Error("the fake chain looped without end");
    return h.serve(
      makeRequest(q.question[0].name, q.question[0].type, {
        remoteAddress: "10.0.0.9",
        remotePort: 3000 + hops,
      }),
    );
  };
  const loop = new Loop(".", f.ctx.log("loop"), { exchange });
  const h = loop.handler(upstream(exchange));
  return { loop, logs: f.logs, handler: h };
}

/** A next handler that forwards every query back to the server, as `forward . <itself>` does. */
const toSelf = (exchange: Exchange): Handler => ({
  name: "forward",
  async serve(req) {
    return (await exchange("127.0.0.1", 53, req.msg, 1000)) ?? replyTo(req.msg, Rcode.SERVFAIL);
  },
});

test("a probe that comes back a third time fails start-up with a LoopError naming the path", async () => {
  const { loop, logs } = looped(toSelf);
  await assert.rejects(loop.probe(AT), (err: unknown) => {
    assert.ok(err instanceof LoopError);
    assert.equal(err.code, "CDNS_ERR_LOOP");
    assert.match(
      err.message,
      /^loop: forwarding loop detected: the probe "HINFO \d+\.\d+\." sent to 127\.0\.0\.1:53 came back 3 times, the last time from 10\.0\.0\.9:3003/,
    );
    return true;
  });
  assert.equal(loop.seen, 3, "the third hop answers instead of passing on");
  const fatal = logs.filter((l) => l.level === 60);
  assert.equal(fatal.length, 1);
  assert.match(fatal[0].msg, /forwarding loop detected/);
  assert.equal(fatal[0].from, "10.0.0.9:3003");
});

test("a probe answered upstream passes; afterwards the plugin lets every query through", async () => {
  const { loop, handler } = looped(() => recordingNext(Rcode.NXDOMAIN));
  await loop.probe(AT);
  assert.equal(loop.seen, 1);
  // Disabled: even the probe's own name, asked again and again, is passed on and not counted.
  for (let i = 0; i < 5; i++) {
    const m = await handler.serve(makeRequest(loop.qname, Type.HINFO));
    assert.equal(m.rcode, Rcode.NXDOMAIN);
  }
  assert.equal(loop.seen, 1);
});

test("other names and types pass through without being counted", async () => {
  const next = recordingNext();
  const loop = new Loop("cluster.local.", fakeContext().ctx.log("loop"), { exchange: async () => undefined });
  const h = loop.handler(next);
  await h.serve(makeRequest(loop.qname, Type.A));
  await h.serve(makeRequest(`x.${loop.qname}`, Type.HINFO));
  await h.serve(makeRequest("cluster.local", Type.HINFO));
  assert.equal(next.calls.length, 3);
  assert.equal(loop.seen, 0);
  assert.match(loop.qname, /^\d+\.\d+\.cluster\.local\.$/);
  assert.notEqual(
    new Loop(".", fakeContext().ctx.log("loop")).qname,
    new Loop(".", fakeContext().ctx.log("loop")).qname,
  );
});

test("no reply (timeout) or a send error lets start-up go on", async () => {
  const f = fakeContext();
  const silent = new Loop(".", f.ctx.log("loop"), { exchange: async () => undefined });
  await silent.probe(AT);
  const broken = new Loop(".", f.ctx.log("loop"), {
    exchange: () => Promise.reject(new Error("EHOSTUNREACH")),
  });
  await broken.probe(AT);
  assert.ok(f.logs.some((l) => l.level === 40 && /could not be sent/.test(l.msg)));
});

test("the probe goes to loopback for a wildcard listener, else to the bound address", async () => {
  const hosts: string[] = [];
  const exchange: Exchange = async (host) => void hosts.push(host);
  const log = fakeContext().ctx.log("loop");
  for (const address of ["0.0.0.0", "::", "10.1.2.3", "::1"])
    await new Loop(".", log, { exchange }).probe({ address, port: 53 });
  assert.deepEqual(hosts, ["127.0.0.1", "::1", "10.1.2.3", "::1"]);
});

test("over real UDP: a server forwarding to itself is found", async () => {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  const { port } = sock.address() as AddressInfo;
  const f = fakeContext();
  const loop = new Loop(".", f.ctx.log("loop"), { timeoutMs: 5000 });
  const h = loop.handler({
    name: "forward",
    async serve(req) {
      return (await udpExchange("127.0.0.1", port, req.msg, 5000)) ?? replyTo(req.msg, Rcode.SERVFAIL);
    },
  });
  const pending: Promise<unknown>[] = [];
  sock.on("message", (buf, rinfo) => {
    const q = decode(buf);
    const req = {
      ...makeRequest(q.question[0].name, q.question[0].type, {
        remoteAddress: rinfo.address,
        remotePort: rinfo.port,
      }),
      msg: q,
    };
    const answered = h
      .serve(req)
      .then((reply) => new Promise((sent) => sock.send(encode(reply), rinfo.port, rinfo.address, sent)));
    pending.push(answered);
  });
  try {
    await assert.rejects(loop.probe({ address: "0.0.0.0", port }), LoopError);
    assert.equal(loop.seen, 3);
  } finally {
    // Let the hops unwind (each answers the one before it) before closing the socket.
    await Promise.all(pending);
    sock.close();
  }
});

test("setup registers the probe for when the listener is open; it takes no arguments", async () => {
  const f = fakeContext();
  const plugin = await setup(dir("loop"), f.ctx);
  assert.ok(plugin);
  assert.equal(f.listening.length, 1);
  assert.equal(f.startup.length, 0);
  await assertConfigErrors(setup, [
    [dir("loop", ["now"], undefined, 6), /^Corefile:6 - .*loop: 'loop' takes 0 argument/],
    [dir("loop", [], [dir("x")]), /takes no block/],
  ]);
});

test("end to end: a server with loop starts and answers normally", async () => {
  const srv = await startServer(". {\n    loop\n    whoami\n}\n");
  try {
    const r = await dig(srv.port, "example.org", "A");
    assert.equal(r.status, "NOERROR");
    assert.equal(r.additional.length, 2, "whoami answered");
    assert.ok(!srv.logs.some((l) => l.level === "fatal"));
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("end to end: forward to its own port is a loop: clusterdns exits 1 and says so", async () => {
  const port = await freePort();
  const { code, stderr } = await startFailure(`.:${port} {\n    loop\n    forward . 127.0.0.1:${port}\n}\n`);
  assert.equal(code, 1);
  assert.match(
    stderr,
    /forwarding loop detected: the probe "HINFO \d+\.\d+\." sent to 127\.0\.0\.1:\d+ came back 3 times/,
  );
});
