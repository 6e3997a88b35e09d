import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { compileTemplate, type TemplateData } from "./go-template.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { setup as metadataSetup } from "../metadata/setup.ts";
import { metadataOf } from "../metadata/labels.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { rrToText } from "../../dns/text.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

const IP_MATCH = "^ip-(?P<a>[0-9]+)-(?P<b>[0-9]+)-(?P<c>[0-9]+)-(?P<d>[0-9]+)[.]example[.]$";

/** The template handler made from these directives in one server block, in front of a recorder. */
async function chain(zones: string[], ...ds: Directive[]) {
  const f = fakeContext({ zones });
  const plugins = [];
  for (const d of ds) plugins.push(await setup(d, f.ctx));
  assert.ok(plugins[0]);
  assert.ok(plugins.slice(1).every((p) => p === undefined));
  const next = recordingNext();
  return { h: plugins[0](next) as Handler, next, logs: f.logs };
}

test("AAAA suppression: NODATA for AAAA in the zone, everything else passes on", async () => {
  const { h, next } = await chain(
    ["."],
    dir("template", ["ANY", "AAAA", "cluster.local"], [dir("rcode", ["NOERROR"])]),
  );
  const m = await h.serve(makeRequest("web.default.svc.cluster.local", Type.AAAA));
  assert.equal(m.rcode, Rcode.NOERROR);
  assert.equal(m.aa, true);
  assert.deepEqual([m.answer, m.authority, m.additional], [[], [], []]);
  assert.equal(next.calls.length, 0);
  await h.serve(makeRequest("web.default.svc.cluster.local", Type.A));
  await h.serve(makeRequest("example.org", Type.AAAA));
  assert.equal(next.calls.length, 2);
});

test("answers built from named and numbered groups, the zone, class and type", async () => {
  const { h, next } = await chain(
    ["."],
    dir(
      "template",
      ["IN", "A", "example"],
      [
        dir("match", [IP_MATCH]),
        dir("answer", [
          '{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ index .Group "c" }}.{{ index .Match 4 }}',
        ]),
        dir("additional", ['{{ .Zone }} 60 {{ .Class }} TXT "{{ .Type }} {{ .Group.1 }}"']),
        dir("fallthrough"),
      ],
    ),
  );
  const req = makeRequest("IP-10-1-2-3.example", Type.A);
  const m = await h.serve(req);
  assert.deepEqual(m.answer.map(rrToText), ["ip-10-1-2-3.example.\t60\tIN\tA\t10.1.2.3"]);
  assert.deepEqual(m.additional.map(rrToText), ['example.\t60\tIN\tTXT\t"A 10"']);
  assert.equal(req.answeredBy, "template");
  assert.equal(req.cache.private, false);
  assert.equal(next.calls.length, 0);
  // No regex match: fallthrough passes on.
  await h.serve(makeRequest("www.example", Type.A));
  assert.equal(next.calls.length, 1);
});

test("a query of type ANY or class ANY matches a template of any type and class", async () => {
  const { h } = await chain(
    ["."],
    dir("template", ["IN", "A", "example"], [dir("answer", ["{{ .Name }} 5 IN A 192.0.2.1"])]),
  );
  assert.equal((await h.serve(makeRequest("x.example", Type.ANY))).answer.length, 1);
  assert.equal((await h.serve(makeRequest("x.example", Type.A, { qclass: Class.ANY }))).answer.length, 1);
});

test("no regex match: SERVFAIL without fallthrough; fallthrough ZONES limits it", async () => {
  const { h, next } = await chain(
    ["."],
    dir("template", ["IN", "A", "example"], [dir("match", ["^a[.]"]), dir("fallthrough", ["in.example"])]),
  );
  assert.equal((await h.serve(makeRequest("b.in.example", Type.A))).rcode, Rcode.REFUSED, "passed on");
  assert.equal((await h.serve(makeRequest("b.out.example", Type.A))).rcode, Rcode.SERVFAIL);
  const strict = await chain(["."], dir("template", ["IN", "A", "example"], [dir("match", ["^a[.]"])]));
  assert.equal((await strict.h.serve(makeRequest("b.example", Type.A))).rcode, Rcode.SERVFAIL);
  assert.equal(strict.next.calls.length, 0);
  assert.equal(next.calls.length, 1);
});

test("templates of a block are tried in order; fallthrough goes to the next one", async () => {
  const { h, next } = await chain(
    ["example.org."],
    dir(
      "template",
      ["IN", "SOA"],
      [
        dir("match", ["^example\\.org\\.$"]),
        dir("answer", ["{{ .Zone }} 3600 IN SOA ns1.{{ .Zone }} admin.{{ .Zone }} (1 60 120 86400 3600)"]),
        dir("fallthrough"),
      ],
    ),
    dir(
      "template",
      ["IN", "SOA"],
      [
        dir("rcode", ["NXDOMAIN"]),
        dir("authority", ["{{ .Zone }} 60 IN SOA ns1.{{ .Zone }} admin.{{ .Zone }} ( 1 60 120 86400 60 )"]),
      ],
    ),
  );
  const apex = await h.serve(makeRequest("example.org", Type.SOA));
  assert.deepEqual(apex.answer.map(rrToText), [
    "example.org.\t3600\tIN\tSOA\tns1.example.org. admin.example.org. 1 60 120 86400 3600",
  ]);
  const below = await h.serve(makeRequest("x.example.org", Type.SOA));
  assert.equal(below.rcode, Rcode.NXDOMAIN);
  assert.equal(below.answer.length, 0);
  assert.equal(below.authority[0].ttl, 60);
  assert.equal(next.calls.length, 0);
});

test("parseInt turns hexadecimal groups into decimal", async () => {
  const { h } = await chain(
    ["."],
    dir(
      "template",
      ["IN", "A", "example"],
      [
        dir("match", ["^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$"]),
        dir("answer", [
          "{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt (index .Match 2) 16 8 }}.{{ parseInt .Group.d 16 8 }}",
        ]),
      ],
    ),
  );
  const m = await h.serve(makeRequest("ip0a7b7c0f.example", Type.A));
  assert.deepEqual(
    m.answer.map((r) => (r.data as { address: string }).address),
    ["10.123.124.15"],
  );
});

test("a template reading .Remote makes the reply private", async () => {
  const { h } = await chain(
    ["."],
    dir("template", ["IN", "TXT"], [dir("answer", ['{{ .Name }} 0 IN TXT "{{ .Remote }}"'])]),
  );
  const req = makeRequest("who.test", Type.TXT, { remoteAddress: "10.9.8.7" });
  const m = await h.serve(req);
  assert.deepEqual(m.answer.map(rrToText), ['who.test.\t0\tIN\tTXT\t"10.9.8.7"']);
  assert.equal(req.cache.private, true);
});

test("a record that does not parse at query time is SERVFAIL and logged", async () => {
  const { h, logs } = await chain(
    ["."],
    dir(
      "template",
      ["IN", "A"],
      [dir("match", ["^(?P<x>[a-z]+)[.]"]), dir("answer", ["{{ .Name }} 60 IN A {{ .Group.x }}"])],
    ),
  );
  const m = await h.serve(makeRequest("abc.test", Type.A));
  assert.equal(m.rcode, Rcode.SERVFAIL);
  assert.ok(
    logs.some((l) => l.msg === "template failed" && l.template === "Corefile:3"),
    JSON.stringify(logs),
  );
  const bad = await chain(
    ["."],
    dir(
      "template",
      ["IN", "A"],
      [
        dir("match", ["^(?P<x>[a-z]+)[.]"]),
        dir("answer", ["{{ .Name }} 60 IN A 10.0.0.{{ parseInt .Group.x 10 8 }}"]),
      ],
    ),
  );
  assert.equal((await bad.h.serve(makeRequest("abc.test", Type.A))).rcode, Rcode.SERVFAIL);
});

test("compileTemplate: trim markers, literal text, <no value> for a missing group", () => {
  const data: TemplateData = {
    name: "a.test.",
    zone: "test.",
    class: "IN",
    type: "A",
    remote: "::1",
    match: ["a.test."],
    group: { "0": "a.test." },
    meta: (label) => (label === "a/b" ? "v" : ""),
  };
  assert.equal(compileTemplate("x {{- .Name -}} y").render(data), "xa.test.y");
  assert.equal(compileTemplate("plain").render(data), "plain");
  assert.equal(compileTemplate("{{ .Group.z }}").render(data), "<no value>");
  assert.equal(compileTemplate(`{{ .Meta "a/b" }}-{{ .Meta "c/d" }}`).render(data), "v-");
  const c = compileTemplate("{{ .Group.a }} {{ index .Match 3 }} {{ .Remote }}");
  assert.deepEqual([...c.groups].sort(), ["3", "a"]);
  assert.equal(c.usesRemote, true);
});

test("setup rejects bad templates, regexes and options with file:line", async () => {
  const ctx = () => fakeContext({ zones: ["example.org."] }).ctx;
  await assertConfigErrors(
    setup,
    [
      [dir("template", ["IN"], undefined, 4), /^Corefile:4 - .*template: 'template' takes at least 2/],
      [dir("template", ["XX", "A"]), /unknown class 'XX'/],
      [dir("template", ["IN", "BOGUS"]), /unknown type 'BOGUS'/],
      [dir("template", ["IN", "A", "other.org"]), /not inside the server block's zones/],
      [
        dir("template", ["IN", "A"], [dir("answer", ["{{ .Name | upper }} 60 IN A 1.2.3.4"])]),
        /unsupported template action/,
      ],
      [
        dir("template", ["IN", "A"], [dir("answer", ['{{ printf "%s" .Name }} A 1.2.3.4'])]),
        /unsupported template action/,
      ],
      [dir("template", ["IN", "A"], [dir("answer", ["{{ $x }}"])]), /unsupported value '\$x'/],
      [dir("template", ["IN", "A"], [dir("answer", ["{{ .Message }}"])]), /unsupported value '\.Message'/],
      [dir("template", ["IN", "A"], [dir("answer", ["{{ .Name 60 IN A"])]), /unclosed action/],
      [dir("template", ["IN", "A"], [dir("answer", ["{{ parseInt .Name 99 8 }}"])]), /base must be 2 to 36/],
      [
        dir(
          "template",
          ["IN", "A"],
          [dir("match", ["^(?P<a>x)"]), dir("answer", ["{{ .Group.b }}"], undefined, 9)],
        ),
        /^Corefile:9 - .*no match regex has a group 'b'/,
      ],
      [
        dir("template", ["IN", "A"], [dir("answer", ["{{ index .Match 1 }}"])]),
        /no match regex has a group '1'/,
      ],
      [dir("template", ["IN", "A"], [dir("match", ["(unclosed"])]), /invalid regex '\(unclosed'/],
      [dir("template", ["IN", "A"], [dir("rcode", ["MAYBE"])]), /unknown rcode 'MAYBE'/],
      [dir("template", ["IN", "A"], [dir("ederror", ["70000"])]), /70000 is out of range \[0, 65535\]/],
      [dir("template", ["IN", "A"], [dir("ederror", [])]), /'ederror' takes 1 to 2 argument/],
      [dir("template", ["IN", "A"], [dir("ttl", ["5"])]), /unknown property 'ttl'/],
      [dir("template", ["IN", "A"], [dir("answer", [])]), /takes at least 1/],
    ],
    ctx,
  );
});

test("ederror puts an extended DNS error (RFC 8914) in the template's replies", async () => {
  const { h } = await chain(
    ["."],
    dir(
      "template",
      ["IN", "A", "blocked.test"],
      [dir("rcode", ["NXDOMAIN"]), dir("ederror", ["15", "policy"])],
    ),
  );
  const req = makeRequest("ads.blocked.test", Type.A, { edns: true });
  const m = await h.serve(req);
  assert.equal(m.rcode, Rcode.NXDOMAIN);
  const ede = m.edns?.options.find((o) => o.code === 15);
  assert.deepEqual([...(ede?.data ?? [])], [0, 15, ...Buffer.from("policy")]);
});

test("upstream, a no-op in CoreDNS, is accepted with one warning line naming its file:line", async () => {
  const { h, logs } = await chain(
    ["."],
    dir("template", ["IN", "AAAA", "cluster.local"], [dir("upstream", ["10.0.0.1"], undefined, 7)]),
  );
  const warnings = logs.filter((l) => l.level === 40);
  assert.equal(warnings.length, 1, JSON.stringify(logs));
  assert.equal(warnings[0].at, "Corefile:7");
  assert.match(warnings[0].msg, /'upstream' is ignored/);
  assert.equal((await h.serve(makeRequest("a.cluster.local", Type.AAAA))).rcode, Rcode.NOERROR);
});

test("end to end: dig gets templated A records and NODATA for AAAA", async () => {
  const corefile = `example {
    template IN A {
        match ${IP_MATCH}
        answer "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"
    }
    template ANY AAAA {
        rcode NOERROR
    }
}
`;
  const srv = await startServer(corefile);
  try {
    const a = await dig(srv.port, "ip-10-20-30-40.example", "A");
    assert.equal(a.status, "NOERROR");
    assert.ok(a.flags.includes("aa"));
    assert.deepEqual(a.answer, ["ip-10-20-30-40.example. 60 IN A 10.20.30.40"]);
    const aaaa = await dig(srv.port, "ip-10-20-30-40.example", "AAAA");
    assert.equal(aaaa.status, "NOERROR");
    assert.deepEqual(aaaa.answer, []);
    const other = await dig(srv.port, "www.example", "A");
    assert.equal(other.status, "SERVFAIL");
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("end to end: .Type and .Class of a query of type or class ANY are the template's, as in CoreDNS", async () => {
  const corefile = `example {
    template IN A {
        answer "{{ .Name }} 60 {{ .Class }} {{ .Type }} 192.0.2.1"
    }
}
`;
  const srv = await startServer(corefile);
  try {
    const any = await dig(srv.port, "x.example", "ANY");
    assert.equal(any.status, "NOERROR");
    assert.deepEqual(any.answer, ["x.example. 60 IN A 192.0.2.1"]);
    const anyClass = await dig(srv.port, "x.example", "A", "-c", "ANY");
    assert.equal(anyClass.status, "NOERROR");
    assert.deepEqual(anyClass.answer, ["x.example. 60 IN A 192.0.2.1"]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test('end to end: {{ .Meta "LABEL" }} is the metadata label\'s value, empty for a label nobody publishes', async () => {
  const corefile = `example {
    view inside {
        expr true
    }
    metadata
    template IN TXT {
        answer "{{ .Name }} 60 IN TXT \\"{{ .Meta \\"view/name\\" }}\\" \\"{{ .Meta \\"nobody/here\\" }}\\""
    }
}
`;
  const srv = await startServer(corefile);
  try {
    const r = await dig(srv.port, "x.example", "TXT");
    assert.equal(r.status, "NOERROR");
    assert.deepEqual(r.answer, ['x.example. 60 IN TXT "inside" ""']);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("a template reading a per-client metadata label makes the reply private; another label does not", async () => {
  const f = fakeContext({ zones: ["."] });
  await metadataSetup(dir("metadata"), f.ctx);
  metadataOf(f.ctx.block.shared)!.provide({
    label: (name) =>
      name === "test/ns"
        ? { value: (q) => (q.remoteAddress === "10.0.0.1" ? "team-a" : undefined), perClient: true }
        : name === "test/fixed"
          ? { value: () => "same", perClient: false }
          : undefined,
  });
  const each = dir(
    "template",
    ["IN", "TXT", "a.example"],
    [dir("answer", ['{{ .Name }} 5 IN TXT "{{ .Meta "test/ns" }}"'])],
  );
  const one = dir(
    "template",
    ["IN", "TXT", "b.example"],
    [dir("answer", ['{{ .Name }} 5 IN TXT "{{ .Meta "test/fixed" }}"'])],
  );
  const plugin = await setup(each, f.ctx);
  await setup(one, f.ctx);
  await f.start();
  const h = plugin!(recordingNext());
  const mine = makeRequest("a.example", Type.TXT, { remoteAddress: "10.0.0.1" });
  assert.deepEqual((await h.serve(mine)).answer.map(rrToText), ['a.example.\t5\tIN\tTXT\t"team-a"']);
  assert.equal(mine.cache.private, true);
  const other = makeRequest("a.example", Type.TXT, { remoteAddress: "10.0.0.2" });
  assert.deepEqual((await h.serve(other)).answer.map(rrToText), ['a.example.\t5\tIN\tTXT\t""']);
  const fixed = makeRequest("b.example", Type.TXT, { remoteAddress: "10.0.0.1" });
  assert.deepEqual((await h.serve(fixed)).answer.map(rrToText), ['b.example.\t5\tIN\tTXT\t"same"']);
  assert.equal(fixed.cache.private, false);
});
