import { test } from "node:test";
import assert from "node:assert/strict";
import { parseResolvConf, podResolvConf } from "./resolv-conf.ts";
import {
  candidates,
  countDots,
  queryOutcome,
  searchWalk,
  unencodable,
  type CandidateOutcome,
  type WalkEnd,
} from "./search.ts";
import { Rcode } from "../dns/constants.ts";

const pod = parseResolvConf(podResolvConf("default"));
const conf = (extra: string) => parseResolvConf(podResolvConf("default") + extra);

test("a short name: the search list, then as is", () => {
  assert.deepEqual(candidates("web", pod), [
    "web.default.svc.cluster.local.",
    "web.svc.cluster.local.",
    "web.cluster.local.",
    "web.",
  ]);
});

test("a trailing dot: the name alone", () => {
  assert.deepEqual(candidates("web.default.svc.cluster.local.", pod), ["web.default.svc.cluster.local."]);
});

test("ndots: as is first from ndots dots on", () => {
  assert.deepEqual(candidates("a.b.c.d.e", pod).at(-1), "a.b.c.d.e.");
  assert.deepEqual(candidates("a.b.c.d.e.f", pod), [
    "a.b.c.d.e.f.",
    "a.b.c.d.e.f.default.svc.cluster.local.",
    "a.b.c.d.e.f.svc.cluster.local.",
    "a.b.c.d.e.f.cluster.local.",
  ]);
  assert.deepEqual(candidates("web", conf("options ndots:0\n"))[0], "web.");
});

test("case is kept", () => {
  assert.equal(candidates("Web.Default", pod)[0], "Web.Default.default.svc.cluster.local.");
});

test("no-tld-query drops the as-is query of a dotless name only", () => {
  const c = conf("options no-tld-query\n");
  assert.equal(candidates("web", c).length, 3);
  assert.equal(candidates("example.com", c).at(-1), "example.com.");
  assert.deepEqual(candidates("web", parseResolvConf("options no-tld-query\n")), ["web."], "no search list");
});

test("the root and leading dots in the search list", () => {
  assert.deepEqual(candidates("q", parseResolvConf("search a .\n")), ["q.a.", "q."]);
  assert.deepEqual(candidates("q", parseResolvConf("search . a\n")), ["q.", "q.a."]);
  assert.deepEqual(candidates("q", parseResolvConf("search .a a.\n")), ["q.a.", "q.a.", "q."]);
});

test("no limit on the number of search domains", () => {
  const many = Array.from({ length: 8 }, (_, i) => `s${i}`);
  assert.equal(candidates("q", parseResolvConf(`search ${many.join(" ")}\n`)).length, 9);
});

test("a candidate too long to encode is not sent and ends the search list", () => {
  const long = `${"x".repeat(62)}.${"x".repeat(62)}.${"x".repeat(62)}.${"y".repeat(61)}`; // 250 characters
  const c = parseResolvConf(`search a ${long} b\n`);
  assert.deepEqual(candidates("qq", c), ["qq.a.", `qq.${long}.`, "qq.b.", "qq."], "253 characters fit");
  assert.deepEqual(candidates("qqq", c), ["qqq.a.", "qqq."]);
  assert.deepEqual(candidates("qqq", parseResolvConf(`search a ${long} b\noptions no-tld-query\n`)), [
    "qqq.a.",
  ]);
  assert.deepEqual(candidates("q..w", pod), []);
});

test("unencodable", () => {
  assert.equal(unencodable("a.b."), undefined);
  assert.equal(unencodable("."), undefined);
  assert.match(unencodable("a..b")!, /empty label/);
  assert.match(unencodable(".a")!, /empty label/);
  assert.match(unencodable("x".repeat(64))!, /64 octets/);
  assert.equal(unencodable("x".repeat(63)), undefined);
  assert.equal(unencodable(`${"x".repeat(63)}.`.repeat(3) + "x".repeat(61)), undefined);
  assert.match(unencodable(`${"x".repeat(63)}.`.repeat(3) + "x".repeat(62))!, /256 octets/);
  assert.equal(unencodable("a\\.b"), undefined);
  assert.equal(countDots("a\\.b."), 2);
});

const NX: CandidateOutcome = { found: false, herrno: "HOST_NOT_FOUND", firstRcode: Rcode.NXDOMAIN };
const NODATA: CandidateOutcome = { found: false, herrno: "NO_DATA", firstRcode: Rcode.NOERROR };
const SERVFAIL: CandidateOutcome = { found: false, herrno: "TRY_AGAIN", firstRcode: Rcode.SERVFAIL };
const TIMEOUT: CandidateOutcome = { found: false, herrno: "TRY_AGAIN", firstRcode: Rcode.NOERROR };
const REFUSED: CandidateOutcome = { found: false, herrno: "NO_RECOVERY", firstRcode: Rcode.REFUSED };
const FOUND: CandidateOutcome = { found: true, firstRcode: Rcode.NOERROR };

/** Runs the walk with outcomes chosen per name; unlisted names are NXDOMAIN. */
function drive(
  name: string,
  c: typeof pod,
  outcomes: Record<string, CandidateOutcome>,
): { asked: string[]; end: WalkEnd } {
  const asked: string[] = [];
  const w = searchWalk(name, c);
  let step = w.next();
  while (!step.done) {
    asked.push(step.value.name);
    step = w.next(outcomes[step.value.name] ?? NX);
  }
  return { asked, end: step.value };
}

test("NXDOMAIN and NODATA go on; NODATA is the error when nothing is found", () => {
  const r = drive("web", pod, { "web.default.svc.cluster.local.": NODATA });
  assert.equal(r.asked.length, 4);
  assert.deepEqual(r.end, { found: false, herrno: "NO_DATA" });
  assert.deepEqual(drive("web", pod, {}).end, { found: false, herrno: "HOST_NOT_FOUND" });
});

test("SERVFAIL goes on and is the error when nothing else is", () => {
  const r = drive("web", pod, { "web.default.svc.cluster.local.": SERVFAIL, "web.": NX });
  assert.equal(r.asked.length, 4);
  assert.deepEqual(r.end, { found: false, herrno: "TRY_AGAIN" });
  const both = drive("web", pod, {
    "web.default.svc.cluster.local.": SERVFAIL,
    "web.svc.cluster.local.": NODATA,
  });
  assert.equal(both.end.herrno, "NO_DATA", "NODATA wins over SERVFAIL");
});

test("REFUSED and timeouts end the search list; the as-is query still follows", () => {
  for (const stop of [REFUSED, TIMEOUT]) {
    const r = drive("web", pod, { "web.default.svc.cluster.local.": stop, "web.": FOUND });
    assert.deepEqual(r.asked, ["web.default.svc.cluster.local.", "web."]);
    assert.deepEqual(r.end, { found: true, name: "web." });
  }
});

test("the as-is query made first gives the error", () => {
  const r = drive("a.b.c.d.e.f", pod, { "a.b.c.d.e.f.": SERVFAIL });
  assert.equal(r.asked.length, 4);
  assert.deepEqual(r.end, { found: false, herrno: "TRY_AGAIN" });
  const abs = drive("a.b.", pod, { "a.b.": SERVFAIL });
  assert.deepEqual(abs, { asked: ["a.b."], end: { found: false, herrno: "TRY_AGAIN" } });
});

test("no reachable server ends the walk at once", () => {
  const refused: CandidateOutcome = { ...TIMEOUT, connRefused: true };
  const r = drive("web", pod, { "web.default.svc.cluster.local.": refused });
  assert.deepEqual(r, {
    asked: ["web.default.svc.cluster.local."],
    end: { found: false, herrno: "TRY_AGAIN" },
  });
});

test("found stops the walk", () => {
  const r = drive("web", pod, { "web.svc.cluster.local.": FOUND });
  assert.deepEqual(r.end, { found: true, name: "web.svc.cluster.local." });
  assert.equal(r.asked.length, 2);
});

test("queryOutcome follows __res_context_query", () => {
  const h = (rcode: number, ancount = 0) => ({ rcode, ancount });
  const o = (first?: ReturnType<typeof h>, second?: ReturnType<typeof h>) =>
    queryOutcome({ first, second, firstRcode: first?.rcode ?? Rcode.NOERROR });
  assert.equal(o(h(Rcode.NOERROR, 1), h(Rcode.NOERROR)).found, true);
  assert.equal(o(h(Rcode.NOERROR), h(Rcode.NOERROR, 2)).found, true);
  assert.equal(o(h(Rcode.NXDOMAIN), h(Rcode.NOERROR, 1)).found, true, "the data wins");
  assert.equal(o(h(Rcode.NOERROR), h(Rcode.NOERROR)).herrno, "NO_DATA");
  assert.equal(o(h(Rcode.NXDOMAIN), h(Rcode.NXDOMAIN)).herrno, "HOST_NOT_FOUND");
  assert.equal(o(h(Rcode.NOERROR), h(Rcode.NXDOMAIN)).herrno, "HOST_NOT_FOUND");
  assert.equal(o(h(Rcode.SERVFAIL)).herrno, "TRY_AGAIN");
  assert.equal(o(h(Rcode.FORMERR), h(Rcode.FORMERR)).herrno, "NO_RECOVERY");
  assert.equal(o(undefined, h(Rcode.NOERROR)).herrno, "NO_DATA", "only the second buffer counts");
  const failed = queryOutcome({ failed: "ECONNREFUSED", firstRcode: Rcode.NOERROR });
  assert.deepEqual(failed, {
    found: false,
    herrno: "TRY_AGAIN",
    connRefused: true,
    firstRcode: Rcode.NOERROR,
  });
});
