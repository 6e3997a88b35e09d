import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { newQuery, replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { autopathHandler } from "./autopath.ts";
import { autopathStats } from "./stats.ts";

const POD = "10.244.1.5";
const PATH = ["default.svc.cluster.local.", "svc.cluster.local.", "cluster.local."];

const a = (name: string, ip: string): RR => ({
  name,
  type: Type.A,
  class: Class.IN,
  ttl: 30,
  data: { type: Type.A, address: ip },
});
const soa: RR = {
  name: "cluster.local.",
  type: Type.SOA,
  class: Class.IN,
  ttl: 5,
  data: {
    type: Type.SOA,
    mname: "ns.dns.cluster.local.",
    rname: "hostmaster.cluster.local.",
    serial: 1,
    refresh: 7200,
    retry: 1800,
    expire: 86400,
    minimum: 5,
  },
};

/** A tiny DNS world: name -> records; a name with no entry is NXDOMAIN; null means SERVFAIL. */
function world(names: Record<string, RR[] | null>) {
  const asked: string[] = [];
  const answer = (name: string, qtype: number): Msg => {
    asked.push(name);
    const q = newQuery(name, qtype);
    const rrs = names[name];
    if (rrs === null) return replyTo(q, Rcode.SERVFAIL);
    if (rrs === undefined) return { ...replyTo(q, Rcode.NXDOMAIN), authority: [soa] };
    const r = replyTo(q, Rcode.NOERROR);
    r.aa = true;
    r.answer = rrs.filter((rr) => rr.type === qtype);
    if (r.answer.length === 0) r.authority = [soa];
    return r;
  };
  const next: Handler = { name: "world", serve: (req) => Promise.resolve(answer(req.qname, req.qtype)) };
  const lookup = (name: string, qtype: number) => Promise.resolve(answer(name, qtype));
  return { asked, next, lookup };
}

function handler(
  names: Record<string, RR[] | null>,
  o: { path?: string[]; extra?: string[]; server?: string } = {},
) {
  const w = world(names);
  const h = autopathHandler(
    {
      zones: ["."],
      source: () => ({ searchPath: (ip) => (ip === POD ? (o.path ?? PATH) : undefined) }),
      extra: o.extra ?? [],
      lookup: w.lookup,
    },
    w.next,
  );
  return { ...w, h };
}

const ask = (name: string, qtype: number = Type.A, from = POD, server = "dns://:53"): Request => {
  const req = makeRequest(name, qtype, { remoteAddress: from });
  return { ...req, server };
};

describe("autopath", () => {
  it("answers a search-list expansion with a CNAME to the first name that exists", async () => {
    const { h, asked } = handler({ "api.example.com.": [a("api.example.com.", "192.0.2.7")] });
    const req = ask("api.example.com.default.svc.cluster.local", Type.A, POD, "dns://:5301");
    const r = await h.serve(req);
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.deepEqual(
      r.answer.map((rr) => [rr.name, rr.type, rr.data]),
      [
        [
          "api.example.com.default.svc.cluster.local.",
          Type.CNAME,
          { type: Type.CNAME, target: "api.example.com." },
        ],
        ["api.example.com.", Type.A, { type: Type.A, address: "192.0.2.7" }],
      ],
    );
    assert.equal(r.answer[0].ttl, 30);
    assert.deepEqual(asked, [
      "api.example.com.default.svc.cluster.local.",
      "api.example.com.svc.cluster.local.",
      "api.example.com.cluster.local.",
      "api.example.com.",
    ]);
    assert.equal(req.cache.private, true, "the answer depends on who asked");
    assert.equal(autopathStats("dns://:5301").cname, 1);
  });

  it("stops at the first candidate that exists, in search order", async () => {
    const { h, asked } = handler({
      "nginx.default.svc.cluster.local.": [a("nginx.default.svc.cluster.local.", "10.96.0.20")],
      "nginx.default.cluster.local.": [a("nginx.default.cluster.local.", "10.96.9.9")],
    });
    // nginx.default from a pod in default: nginx.default.default.svc... then nginx.default.svc...
    const r = await h.serve(ask("nginx.default.default.svc.cluster.local"));
    assert.equal(r.answer[0].type, Type.CNAME);
    assert.equal((r.answer[0].data as { target: string }).target, "nginx.default.svc.cluster.local.");
    assert.equal(asked.length, 2);
  });

  it("answers a name that exists as asked without a CNAME, and lets it be cached for everyone", async () => {
    const { h, asked } = handler({
      "nginx.default.svc.cluster.local.": [a("nginx.default.svc.cluster.local.", "10.96.0.20")],
    });
    const req = ask("nginx.default.svc.cluster.local");
    const r = await h.serve(req);
    assert.deepEqual(
      r.answer.map((rr) => rr.type),
      [Type.A],
    );
    assert.deepEqual(asked, ["nginx.default.svc.cluster.local."]);
    assert.equal(req.cache.private, false);
  });

  it("keeps NODATA of an existing candidate, without a CNAME that would end glibc's walk", async () => {
    const { h } = handler({ "api.example.com.": [a("api.example.com.", "192.0.2.7")] });
    const r = await h.serve(ask("api.example.com.default.svc.cluster.local", Type.AAAA));
    assert.equal(r.rcode, Rcode.NOERROR, "NOERROR, as the A query's CNAME answer says the name exists");
    assert.deepEqual(r.answer, []);
    assert.equal(r.question[0].name, "api.example.com.default.svc.cluster.local.");
    assert.equal(r.authority[0].type, Type.SOA);
  });

  it("answers NXDOMAIN for the asked name when no candidate exists, kept out of the shared cache", async () => {
    const { h, asked } = handler({}, { extra: ["corp.example."] });
    const req = ask("nothing.here.default.svc.cluster.local");
    const r = await h.serve(req);
    assert.equal(r.rcode, Rcode.NXDOMAIN);
    assert.equal(r.question[0].name, "nothing.here.default.svc.cluster.local.");
    assert.deepEqual(asked.slice(3), ["nothing.here.corp.example.", "nothing.here."]);
    assert.equal(req.cache.private, true);
  });

  it("gives up the walk when a candidate's lookup fails, so the client walks itself", async () => {
    const { h, asked } = handler({ "x.svc.cluster.local.": null, "x.": [a("x.", "192.0.2.1")] });
    const r = await h.serve(ask("x.default.svc.cluster.local"));
    assert.equal(r.rcode, Rcode.NXDOMAIN);
    assert.deepEqual(asked, ["x.default.svc.cluster.local.", "x.svc.cluster.local."]);
  });

  it("answers as without autopath for an unknown client, keeping its NXDOMAIN out of the cache", async () => {
    const { h, asked } = handler({});
    const req = ask("api.example.com.default.svc.cluster.local", Type.A, "10.0.0.99");
    const r = await h.serve(req);
    assert.equal(r.rcode, Rcode.NXDOMAIN);
    assert.deepEqual(asked, ["api.example.com.default.svc.cluster.local."]);
    assert.equal(req.cache.private, true);
  });

  it("leaves names outside the client's first search domain alone", async () => {
    const { h, asked } = handler({});
    await h.serve(ask("api.example.com"));
    await h.serve(ask("x.team-a.svc.cluster.local"));
    await h.serve(ask("default.svc.cluster.local"));
    assert.deepEqual(asked, [
      "api.example.com.",
      "x.team-a.svc.cluster.local.",
      "default.svc.cluster.local.",
    ]);
  });

  it("never walks internal lookups", async () => {
    const { h, asked } = handler({});
    const req = { ...ask("api.example.com.default.svc.cluster.local"), depth: 1 };
    await h.serve(req);
    assert.equal(asked.length, 1);
  });

  it("does not try a search domain twice when the server's list repeats the client's", async () => {
    const { h, asked } = handler({}, { extra: ["cluster.local.", "svc.cluster.local.", "corp."] });
    await h.serve(ask("x.default.svc.cluster.local"));
    assert.deepEqual(asked, [
      "x.default.svc.cluster.local.",
      "x.svc.cluster.local.",
      "x.cluster.local.",
      "x.corp.",
      "x.",
    ]);
  });
});
