import { test } from "node:test";
import assert from "node:assert/strict";
import { atoi, inetAton, parseNameserver, parseResolvConf, podResolvConf } from "./resolv-conf.ts";

test("a pod's resolv.conf", () => {
  const c = parseResolvConf(podResolvConf("default", "cluster.local", "10.96.0.10"));
  assert.deepEqual(c.nameservers, ["10.96.0.10"]);
  assert.deepEqual(c.search, ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"]);
  assert.equal(c.ndots, 5);
  assert.equal(c.attempts, 2);
  assert.equal(c.timeout, 5);
  assert.deepEqual(c.notes, []);
});

test("defaults: 127.0.0.1, no search list, ndots 1; the host name's domain when asked", () => {
  const c = parseResolvConf("");
  assert.deepEqual(c.nameservers, ["127.0.0.1"]);
  assert.deepEqual(c.search, []);
  assert.equal(c.ndots, 1);
  assert.deepEqual(parseResolvConf("", "f", { hostname: "node1.corp.example" }).search, ["corp.example"]);
  assert.deepEqual(parseResolvConf("", "f", { hostname: "node1" }).search, []);
  assert.deepEqual(parseResolvConf("search a\n", "f", { hostname: "n.b" }).search, ["a"]);
});

test("search and domain: the last line wins; domain keeps its first word", () => {
  assert.deepEqual(parseResolvConf("search a b\nsearch c\n").search, ["c"]);
  assert.deepEqual(parseResolvConf("search a b\ndomain d e\n").search, ["d"]);
  assert.deepEqual(parseResolvConf("domain d\nsearch a b\n").search, ["a", "b"]);
  assert.deepEqual(parseResolvConf("search\ta\t b \n").search, ["a", "b"]);
});

test("an empty search line keeps the list; one without a blank after the keyword is no search line", () => {
  const kept = parseResolvConf("search a\nsearch   \n");
  assert.deepEqual(kept.search, ["a"]);
  assert.match(kept.notes[0].message, /keeps the previous search list/);
  const bare = parseResolvConf("search a\nsearch\n");
  assert.deepEqual(bare.search, ["a"]);
  assert.equal(bare.notes[0].where, "resolv.conf:2");
});

test("comments only at the start of a line; '#' later on a search line is a domain", () => {
  assert.deepEqual(parseResolvConf("# search x\n; search y\nsearch a # comment\n").search, [
    "a",
    "#",
    "comment",
  ]);
  assert.deepEqual(parseResolvConf("nameserver 10.0.0.1 # dns\n").nameservers, ["10.0.0.1"]);
});

test("a keyword must start the line and be lowercase; CR stays in names", () => {
  const c = parseResolvConf(" search a\nSEARCH b\nOPTIONS ndots:3\n", "/etc/resolv.conf");
  assert.deepEqual(c.search, []);
  assert.equal(c.ndots, 1);
  assert.deepEqual(
    c.notes.map((n) => n.where),
    ["/etc/resolv.conf:1", "/etc/resolv.conf:2", "/etc/resolv.conf:3"],
  );
  assert.deepEqual(parseResolvConf("search a b\r\n").search, ["a", "b\r"]);
});

test("every search domain is kept, however many and however long", () => {
  const many = Array.from({ length: 10 }, (_, i) => `s${i}.example`);
  assert.deepEqual(parseResolvConf(`search ${many.join(" ")}\n`).search, many);
});

test("nameservers: at most three, bad ones skipped, inet_aton forms and IPv6 scopes", () => {
  const c = parseResolvConf(
    "nameserver 10.0.0.1\nnameserver bogus\nnameserver fe80::1%eth0\nnameserver 10.1\nnameserver 10.0.0.9\n",
  );
  assert.deepEqual(c.nameservers, ["10.0.0.1", "fe80::1", "10.0.0.1"]);
  assert.deepEqual(
    c.notes.map((n) => n.message),
    ["ignored: 'bogus' is not an IPv4 or IPv6 address", "ignored: glibc uses only the first 3 nameservers"],
  );
  assert.equal(parseNameserver("0x7f.1"), "127.0.0.1");
  assert.equal(parseNameserver("::1"), "::1");
  assert.equal(parseNameserver("1.2.3.4.5"), undefined);
  assert.equal(parseNameserver(""), undefined);
});

test("inet_aton: 1 to 4 parts, octal and hex, ranges", () => {
  assert.equal(inetAton("192.168.1.2"), "192.168.1.2");
  assert.equal(inetAton("10.65535"), "10.0.255.255");
  assert.equal(inetAton("10.1.256"), "10.1.1.0");
  assert.equal(inetAton("010.0x10.0.1"), "8.16.0.1");
  assert.equal(inetAton("4294967295"), "255.255.255.255");
  assert.equal(inetAton("4294967296"), undefined);
  assert.equal(inetAton("10.256.0.1"), undefined);
  assert.equal(inetAton("08.1.1.1"), undefined);
  assert.equal(inetAton("1..2"), undefined);
  assert.equal(inetAton("1.2.3.4 "), undefined);
});

test("ndots: atoi, capped at 15, then kept in 4 bits", () => {
  const ndots = (v: string) => parseResolvConf(`options ndots:${v}\n`).ndots;
  assert.equal(ndots("3"), 3);
  assert.equal(ndots("99"), 15);
  assert.equal(ndots("16"), 15);
  assert.equal(ndots("abc"), 0);
  assert.equal(ndots("2x"), 2);
  assert.equal(ndots("-1"), 15);
  assert.equal(ndots("-5"), 11);
  assert.equal(ndots("-16"), 0);
  assert.equal(ndots(" 2"), 2, "atoi skips the blank and reads the next word");
  assert.equal(ndots("99999999999999999999"), 15, "strtol clamps, the int is -1, then 15");
});

test("attempts and timeout: atoi, capped at 5 and 30; 0 and negative are kept", () => {
  const c = (o: string) => parseResolvConf(`options ${o}\n`);
  assert.equal(c("attempts:9").attempts, 5);
  assert.equal(c("attempts:0").attempts, 0);
  assert.equal(c("attempts:-1").attempts, -1);
  assert.equal(c("attempts:x").attempts, 0);
  assert.equal(c("timeout:60").timeout, 30);
  assert.equal(c("timeout:1").timeout, 1);
});

test("flags match by prefix, in glibc's order; unknown words are noted and skipped", () => {
  const c = parseResolvConf(
    "options rotate edns0 single-request-reopen no_tld_query use-vc trust-ad no-aaaa\n",
  );
  assert.deepEqual(
    [c.rotate, c.edns0, c.singleRequestReopen, c.singleRequest, c.noTldQuery, c.useVc, c.trustAd, c.noAaaa],
    [true, true, true, false, true, true, true, true],
  );
  const p = parseResolvConf("options no-tld-queryX single-request frobnicate debug\n");
  assert.equal(p.noTldQuery, true);
  assert.equal(p.singleRequest, true);
  assert.deepEqual(
    p.notes.map((n) => n.message),
    ["ignored: unknown option 'frobnicate'", "ignored: unknown option 'debug'"],
  );
  const later = parseResolvConf("options ndots:2\noptions attempts:1 inet6\n");
  assert.deepEqual([later.ndots, later.attempts], [2, 1]);
  assert.match(later.notes[0].message, /no effect/);
});

test("LOCALDOMAIN replaces search and domain lines; RES_OPTIONS comes after the file", () => {
  const env = { LOCALDOMAIN: "l1  l2", RES_OPTIONS: "ndots:3 attempts:1" };
  const c = parseResolvConf("search a\ndomain b\noptions ndots:1 attempts:4\n", "f", { env });
  assert.deepEqual(c.search, ["l1", "l2"]);
  assert.equal(c.ndots, 3);
  assert.equal(c.attempts, 1);
  assert.equal(c.notes.filter((n) => /LOCALDOMAIN/.test(n.message)).length, 2);
  assert.deepEqual(parseResolvConf("search a\n", "f", { env: { LOCALDOMAIN: "" } }).search, [""]);
});

test("atoi", () => {
  assert.equal(atoi("42abc"), 42);
  assert.equal(atoi("  \n-7"), -7);
  assert.equal(atoi("+3"), 3);
  assert.equal(atoi("x1"), 0);
  assert.equal(atoi("4294967297"), 1);
});

test("podResolvConf", () => {
  assert.equal(
    podResolvConf("kube-system", "cluster.local."),
    "search kube-system.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
  );
});
