// rewrite's rules that act on the query's EDNS options and on the reply: edns0, rcode, cname.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { REWRITTEN_FAILURE_SECONDS } from "./rewrite.ts";
import { LOOKED_UP_SECONDS } from "../../answers/policy.ts";
import { clientSubnet } from "./edns0.ts";
import { makeRequest, recordingNext, type RequestOptions } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { setup as metadataSetup } from "../metadata/setup.ts";
import { metadataOf } from "../metadata/labels.ts";
import { blockHandler } from "../../../test/helpers/block-handler.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { startFakeUpstream } from "../../../test/upstream/fake-upstream.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { EdnsOption, Rcode, Type } from "../../dns/constants.ts";

const rule = (...words: string[]) => dir("rewrite", words);
const hex = (data: Uint8Array | undefined) => Buffer.from(data ?? []).toString("hex");

/** Runs one query through the rewrite handler of `rules`; returns what the next plugin saw. */
async function through(
  rules: string[][],
  o: RequestOptions = {},
  next: Handler = recordingNext(Rcode.NOERROR),
) {
  const { h } = await blockHandler(
    setup,
    next,
    rules.map((r) => rule(...r)),
  );
  const req = makeRequest("www.example.org", Type.A, o);
  const reply = await h.serve(req);
  const seen = (next as { calls?: Request[] }).calls?.[0];
  return { req, reply, seen };
}

const option = (req: Request | undefined, code: number) =>
  req?.msg.edns?.options.find((o) => o.code === code);

test("edns0 local set: the next plugins see the option, forward gets it to send; the client's query is untouched", async () => {
  const { req, seen } = await through([["edns0", "local", "set", "0xffee", "0xabcd01"]], { edns: true });
  assert.equal(hex(option(seen, 0xffee)?.data), "abcd01");
  assert.deepEqual(
    seen?.upstreamOptions?.map((o) => [o.code, hex(o.data)]),
    [[0xffee, "abcd01"]],
  );
  assert.equal(req.msg.edns?.options.length, 0);
  assert.equal(req.cache.private, false, "the same option for every client");
});

test("edns0 local: text data, variables, decimal codes; a query without EDNS gets the options too", async () => {
  const cases: [string[], string][] = [
    [["edns0", "local", "set", "65518", "hello"], Buffer.from("hello").toString("hex")],
    [["edns0", "local", "set", "0xffee", "{qname}"], Buffer.from("www.example.org.").toString("hex")],
    [["edns0", "local", "set", "0xffee", "{qtype}"], "0001"],
    [["edns0", "local", "set", "0xffee", "{client_ip}"], "c0000282"],
    [["edns0", "local", "set", "0xffee", "{client_port}"], "9c40"],
    [["edns0", "local", "set", "0xffee", "{protocol}"], Buffer.from("udp").toString("hex")],
  ];
  for (const [words, want] of cases) {
    const { seen, req } = await through([words], { remoteAddress: "::ffff:192.0.2.130" });
    assert.equal(hex(option(seen, 0xffee)?.data), want, words.join(" "));
    assert.equal(req.cache.private, /client|protocol/.test(words.at(-1)!), `${words.join(" ")}: private`);
  }
});

test("edns0 actions: set replaces or adds, replace only replaces, append only adds, unset removes", async () => {
  const withClient = (code: number) => {
    const req = makeRequest("www.example.org", Type.A, { edns: true });
    req.msg.edns!.options = [{ code, data: Uint8Array.of(1) }];
    return req;
  };
  const cases: [string, number, string | undefined][] = [
    ["set", 0xffee, "02"],
    ["set", 0xfff0, "02"],
    ["replace", 0xffee, "02"],
    ["replace", 0xfff0, undefined],
    ["append", 0xffee, "01"],
    ["append", 0xfff0, "02"],
  ];
  for (const [action, clientCode, want] of cases) {
    const next = recordingNext(Rcode.NOERROR);
    const { h } = await blockHandler(setup, next, [rule("edns0", "local", action, "0xffee", "0x02")]);
    await h.serve(withClient(clientCode));
    const got = option(next.calls[0], 0xffee);
    assert.equal(got === undefined ? undefined : hex(got.data), want, `${action} with ${clientCode}`);
  }
  const next = recordingNext(Rcode.NOERROR);
  const { h } = await blockHandler(setup, next, [rule("edns0", "local", "unset", "0xffee")]);
  await h.serve(withClient(0xffee));
  assert.equal(option(next.calls[0], 0xffee), undefined);
  assert.deepEqual(next.calls[0].upstreamOptions, []);
});

test("edns0 nsid and subnet: an empty NSID; the client's network as RFC 7871 says, per client", async () => {
  const nsid = await through([["edns0", "nsid", "set"]]);
  assert.equal(hex(option(nsid.seen, EdnsOption.NSID)?.data), "");
  const v4 = await through([["edns0", "subnet", "set", "24", "56"]], { remoteAddress: "192.0.2.130" });
  assert.equal(hex(option(v4.seen, EdnsOption.ECS)?.data), "00011800c00002");
  assert.equal(v4.req.cache.private, true);
  // 60 bits: seven whole octets and the high nibble of the eighth.
  assert.equal(hex(clientSubnet("2001:db8:1:2ff::5", 24, 60)), "00023c00" + "20010db8000102f0");
  assert.equal(hex(clientSubnet("10.1.2.3", 0, 0)), "00010000");
  assert.equal(hex(clientSubnet("10.1.2.3", 12, 0)), "00010c000a00");
});

test("edns0 rules match every query: stop ends the list there, continue goes on", async () => {
  const zoneNext = (): Handler & { calls: Request[] } => recordingNext(Rcode.NOERROR);
  const stop = zoneNext();
  await through(
    [
      ["edns0", "nsid", "set"],
      ["name", "www.example.org", "other.example.org"],
    ],
    {},
    stop,
  );
  assert.equal(stop.calls[0].qname, "www.example.org.");
  const go = zoneNext();
  await through(
    [
      ["continue", "edns0", "nsid", "set"],
      ["name", "www.example.org", "other.example.org"],
    ],
    {},
    go,
  );
  assert.equal(go.calls[0].qname, "other.example.org.");
  assert.ok(option(go.calls[0], EdnsOption.NSID));
});

test("rcode: a matching name's reply gets the new rcode; a failure rewritten is replayed 5 s at most", async () => {
  const failing = recordingNext(Rcode.SERVFAIL);
  const hit = await through([["rcode", "suffix", "example.org", "SERVFAIL", "NXDOMAIN"]], {}, failing);
  assert.equal(hit.reply.rcode, Rcode.NXDOMAIN);
  assert.equal(hit.req.cache.maxAge, REWRITTEN_FAILURE_SECONDS);
  const other = await through(
    [["rcode", "other.org", "SERVFAIL", "NXDOMAIN"]],
    {},
    recordingNext(Rcode.SERVFAIL),
  );
  assert.equal(other.reply.rcode, Rcode.SERVFAIL);
  const answered = await through([["rcode", "www.example.org", "3", "0"]], {}, recordingNext(Rcode.NXDOMAIN));
  assert.equal(answered.reply.rcode, Rcode.NOERROR, "by number, exact by default");
  assert.equal(answered.req.cache.maxAge, Infinity, "NXDOMAIN carried its TTLs");
});

test("cname: the target is rewritten, the old target's records dropped, the new one's looked up", async () => {
  const rrs = (...l: string[]): RR[] => l.map((x) => parseRRText(x));
  const upstream: Handler = {
    name: "up",
    serve(req) {
      const m = replyTo(req.msg);
      const cdn = req.qname.startsWith("www.") ? "cdn-a.net" : "cdn-c.net";
      m.answer = rrs(
        `${req.qname} 60 IN CNAME www.${cdn}.`,
        `www.${cdn}. 60 IN CNAME edge.${cdn}.`,
        `edge.${cdn}. 60 IN A 192.0.2.1`,
      );
      return Promise.resolve(m);
    },
  };
  const looked: [string, number, number][] = [];
  const lookup = (name: string, qtype: number, depth = 0): Promise<Msg> => {
    looked.push([name, qtype, depth]);
    const m = replyTo(makeRequest(name, qtype).msg);
    m.answer = rrs("www.cdn-b.net. 30 IN A 198.51.100.7");
    return Promise.resolve(m);
  };
  const { h } = await blockHandler(setup, upstream, [rule("cname", "suffix", "cdn-a.net.", "cdn-b.net.")], {
    lookup,
  });
  const req = makeRequest("www.example.org", Type.A);
  const m = await h.serve(req);
  assert.deepEqual(m.answer.map(rrToText), [
    "www.example.org.\t60\tIN\tCNAME\twww.cdn-b.net.",
    "www.cdn-b.net.\t30\tIN\tA\t198.51.100.7",
  ]);
  assert.deepEqual(looked, [["www.cdn-b.net.", Type.A, 1]]);
  assert.equal(req.cache.maxAge, LOOKED_UP_SECONDS);
  const none = await h.serve(makeRequest("plain.example.org", Type.A));
  assert.equal(none.answer.length, 3, "a CNAME no rule matches stays with its chain");
});

test("edns0 local with a metadata label: its value when there is one, no option without; per client when the label is", async () => {
  const f = fakeContext();
  await metadataSetup(dir("metadata"), f.ctx);
  const values: Record<string, string> = { "10.0.0.1": "team-a", "10.0.0.2": "" };
  metadataOf(f.ctx.block.shared)!.provide({
    label: (name) =>
      name === "test/ns" ? { value: (q) => values[q.remoteAddress], perClient: true } : undefined,
  });
  const plugin = await setup(rule("edns0", "local", "set", "0xffee", "{test/ns}"), f.ctx);
  const quiet = await setup(rule("edns0", "local", "set", "0xffef", "{/test/none}"), f.ctx);
  assert.equal(quiet, undefined, "joins the block's list");
  await f.start();
  const next = recordingNext(Rcode.NOERROR);
  const h = plugin!(next);
  for (const client of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
    await h.serve(makeRequest("www.example.org", Type.A, { remoteAddress: client }));
  }
  const seen = (next as { calls: Request[] }).calls;
  assert.equal(hex(option(seen[0], 0xffee)?.data), Buffer.from("team-a").toString("hex"));
  assert.equal(option(seen[1], 0xffee), undefined, "an empty value sets nothing (as CoreDNS)");
  assert.equal(option(seen[2], 0xffee), undefined, "no value sets nothing");
  assert.ok(
    seen.every((r) => option(r, 0xffef) === undefined),
    "a label nobody publishes",
  );
  assert.equal(seen[0].cache.private, true, "the label depends on the client: not replayed to others");
});

test("edns0 with a metadata label in a block without metadata: accepted, with a warning", async () => {
  const f = fakeContext();
  await setup(rule("edns0", "local", "set", "0xffee", "{kubernetes/client-namespace}"), f.ctx);
  assert.ok(f.logs.some((l) => l.level === 40 && /no metadata directive/.test(l.msg)));
});

test("setup checks the new rules at file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("rewrite", ["edns0"], undefined, 5), /^Corefile:5 - .*rewrite: 'edns0' takes local, nsid or subnet/],
    [rule("edns0", "local"), /'edns0 local' takes set, replace, append or unset/],
    [rule("edns0", "local", "add", "1", "2"), /takes set, replace, append or unset/],
    [rule("edns0", "local", "set", "0xffee"), /'edns0 local set' takes CODE DATA/],
    [rule("edns0", "local", "set", "0x1ffff", "ab"), /'0x1ffff' is not an option code/],
    [rule("edns0", "local", "set", "1", "0xabc"), /'0xabc' is not an even number of hex digits/],
    [rule("edns0", "local", "set", "1", "{client-namespace}"), /unknown variable .*\{plugin\/NAME\}/],
    [rule("edns0", "nsid", "set", "x"), /'edns0 nsid set' takes no more words/],
    [rule("edns0", "subnet", "set", "24"), /takes SOURCE-PREFIX-V4 SOURCE-PREFIX-V6/],
    [rule("edns0", "subnet", "set", "33", "56"), /'33' is not a prefix length \(0 to 32\)/],
    [rule("edns0", "cookie", "set"), /unknown edns0 option 'cookie'/],
    [rule("cname", "a.test"), /'cname' takes \[MATCH\] FROM TO/],
    [rule("cname", "regex", "(x", "y"), /invalid regex/],
    [rule("rcode", "a.test", "SERVFAIL"), /'rcode' takes \[MATCH\] NAME FROM TO/],
    [rule("rcode", "a.test", "SERVFAIL", "MAYBE"), /unknown rcode 'MAYBE'/],
    [rule("rcode", "a.test", "4096", "0"), /unknown rcode '4096'/],
  ]);
});

test("end to end: forward sends rewrite's options upstream, never the client's own, and ECS replies are not shared", async () => {
  const up = await startFakeUpstream((q) => {
    const m = replyTo(q);
    const name = q.question[0].name;
    m.answer = [{ name, type: Type.A, class: 1, ttl: 60, data: { type: Type.A, address: "192.0.2.1" } }];
    return [m];
  });
  const srv = await startServer(
    `local.test {\n    rewrite edns0 local set 0xffee 0x0102\n    forward . 127.0.0.1:${up.port}\n}\n` +
      `ecs.test {\n    rewrite edns0 subnet set 24 56\n    forward . 127.0.0.1:${up.port}\n}\n`,
  );
  try {
    const optionsOf = (i: number) => up.queries[i].msg.edns?.options.map((o) => [o.code, hex(o.data)]);
    await dig(srv.port, "www.local.test", "A", "+cookie", "-b", "127.0.0.1");
    assert.deepEqual(optionsOf(0), [[0xffee, "0102"]], "no client cookie upstream");
    // The same question from the same client twice: forwarded replies are replayed for a second, but
    // one that went out with the client's subnet is not.
    await dig(srv.port, "www.local.test", "A");
    assert.equal(up.queries.length, 1, "the local option is the same for everyone: replayed");
    await dig(srv.port, "www.ecs.test", "A", "-b", "127.0.0.1");
    await dig(srv.port, "www.ecs.test", "A", "-b", "127.0.0.2");
    assert.equal(up.queries.length, 3, "each ECS query went upstream");
    assert.deepEqual(optionsOf(1), [[EdnsOption.ECS, "00011800" + "7f0000"]]);
  } finally {
    assert.equal(await srv.stop(), 0);
    await up.close();
  }
});

test("end to end: a CNAME target rewritten and looked up through the server", async () => {
  const zone = zoneText(
    "r.test",
    "www 60 IN CNAME old.r.test.",
    "old 60 IN A 192.0.2.1",
    "new 60 IN A 192.0.2.2",
  );
  const srv = await startServer(
    "r.test {\n    rewrite cname exact old.r.test. new.r.test.\n    file db.r.test\n}\n",
    {
      files: { "db.r.test": zone },
    },
  );
  try {
    const r = await dig(srv.port, "www.r.test", "A");
    assert.deepEqual(r.answer, ["www.r.test. 60 IN CNAME new.r.test.", "new.r.test. 60 IN A 192.0.2.2"]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
