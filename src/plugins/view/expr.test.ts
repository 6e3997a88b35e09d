import { test } from "node:test";
import assert from "node:assert/strict";
import type { ViewQuery } from "../../setup/block.ts";
import type { MetaLabel } from "../metadata/labels.ts";
import { compileExpr } from "./expr.ts";
import { ExprError } from "./expr-lexer.ts";
import { setup } from "./setup.ts";
import { Class, Type } from "../../dns/constants.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";

function query(o: Partial<ViewQuery> = {}): ViewQuery {
  return {
    qname: "www.example.com.",
    qtype: Type.A,
    qclass: Class.IN,
    id: 4242,
    opcode: 0,
    dnssecOk: false,
    udpSize: 1232,
    proto: "udp",
    remoteAddress: "127.0.0.1",
    remotePort: 40000,
    localAddress: "127.0.0.53",
    localPort: 53,
    size: 40,
    ...o,
  };
}

const labels: Record<string, string> = { "kubernetes/client-namespace": "team-b" };
const labelOf = (name: string): MetaLabel => ({ value: () => labels[name], perClient: true });
const holds = (src: string, q: Partial<ViewQuery> = {}) => compileExpr(src, labelOf)(query(q));

test("the README's expressions", () => {
  assert.equal(holds("incidr(client_ip(), '127.0.0.0/24')"), true);
  assert.equal(holds("incidr(client_ip(), '127.0.0.0/24')", { remoteAddress: "192.168.1.1" }), false);
  assert.equal(holds("incidr(client_ip(), '192.168.0.0/16')", { remoteAddress: "::ffff:192.168.1.1" }), true);
  assert.equal(holds("incidr(client_ip(), '2001:0DB8::/32')", { remoteAddress: "2001:db8::1" }), true);
  assert.equal(holds("type() in ['A', 'AAAA']"), true);
  assert.equal(holds("type() in ['A', 'AAAA']", { qtype: Type.TXT }), false);
  const re = "name() matches '^abc\\\\..*\\\\.example\\\\.com\\\\.$'";
  assert.equal(holds(re, { qname: "abc.x.y.example.com." }), true);
  assert.equal(holds(re, { qname: "abcd.example.com." }), false);
  assert.equal(holds("(type() == 'A' && name() == 'example.com.') || client_ip() == '1.2.3.4'"), false);
  assert.equal(
    holds("(type() == 'A' && name() == 'example.com.') || client_ip() == '1.2.3.4'", {
      qname: "example.com.",
    }),
    true,
  );
});

test("every function reads its part of the query", () => {
  assert.equal(
    holds("bufsize() == 1232 && do() == false && id() == 4242 && opcode() == 0 && size() == 40"),
    true,
  );
  assert.equal(holds("bufsize() == 512", { udpSize: 0 }), true, "no EDNS: 512");
  assert.equal(holds("bufsize() == 65535", { proto: "tcp" }), true);
  assert.equal(holds("class() == 'IN' && proto() == 'udp' && port() == '40000'"), true);
  assert.equal(holds("server_ip() == '127.0.0.53' && server_port() == '53'"), true);
  assert.equal(holds("metadata('kubernetes/client-namespace') == 'team-b'"), true);
  assert.equal(holds("metadata('kubernetes/nothing') == ''"), true, "a label without a value is empty");
});

test("operators: precedence, not in, string tests, arithmetic, not", () => {
  assert.equal(holds("true || false && false"), true, "and binds tighter than or");
  assert.equal(holds("not (true and false)"), true);
  assert.equal(holds("!true or type() not in ['TXT']"), true);
  assert.equal(
    holds("name() endsWith 'example.com.' and name() startsWith 'www' and name() contains 'ample'"),
    true,
  );
  assert.equal(holds("1 + 2 * 3 == 7 && 7 % 4 == 3 && -1 < 0 && 'a' + 'b' == 'ab' && 'a' < 'b'"), true);
  assert.equal(holds("0x10 == 16"), true);
  assert.equal(holds("\"dq\" == 'dq'"), true);
});

test("an evaluation that fails is false, as CoreDNS has it", () => {
  assert.equal(holds("incidr(name(), '10.0.0.0/8')"), false, "not an address");
  assert.equal(holds("incidr(client_ip(), name())"), false, "not a CIDR, known only per query");
  assert.equal(holds("not incidr(name(), '10.0.0.0/8')"), false, "the whole expression fails, not the call");
});

test("wrong expressions are refused with the column", () => {
  const refused = (src: string, want: RegExp) =>
    assert.throws(
      () => compileExpr(src, labelOf),
      (e: unknown) => e instanceof ExprError && want.test(e.message),
      src,
    );
  refused("client_ip() == 1", /'==' at column 13 compares a string with a int/);
  refused("nosuch()", /unknown name 'nosuch' at column 1/);
  refused("client_ip", /expected '\(' at column 10, found the end/);
  refused(
    "name() == 'a.' ? true : false",
    /'\?' at column 16 is expr-lang syntax clusterdns does not support/,
  );
  refused(
    "incidr(client_ip(), '10.0.0.0')",
    /incidr\(\) at column 1: invalid CIDR address: '10\.0\.0\.0' has no prefix length/,
  );
  refused("incidr(client_ip())", /takes 2 argument\(s\), got 1/);
  refused("name()", /gives a string, not true or false/);
  refused("type() in 'A'", /'in' at column 8 wants a list, got a string/);
  refused("name() matches '('", /'matches' at column 8: Invalid regular expression/);
  refused("'open", /string at column 1 is not closed/);
  refused("name() == 'a' @", /unexpected '@' at column 15/);
  refused("(true", /expected '\)' at column 6/);
  refused("true false", /unexpected 'false' at column 6/);
  refused("'\\q' == ''", /unknown escape '\\q'/);
});

test("setup: the block gets the view; errors name file:line", async () => {
  const f = fakeContext();
  const plugin = await setup(
    dir(
      "view",
      ["inside"],
      [dir("expr", ["incidr(client_ip(),", "'127.0.0.0/8')"]), dir("expr", ["type()", "==", "'A'"])],
    ),
    f.ctx,
  );
  assert.equal(plugin, undefined, "a setting of the block, no handler");
  const view = f.ctx.block.view!;
  assert.equal(view.name, "inside");
  assert.equal(view.matches(query()), true);
  assert.equal(view.matches(query({ qtype: Type.AAAA })), false, "every expr must hold");
  assert.equal(view.matches(query({ remoteAddress: "10.0.0.1" })), false);

  await assertConfigErrors(setup, [
    [dir("view", [], undefined, 2), /^Corefile:2 - .*view: 'view' takes 1 argument\(s\), got 0/],
    [dir("view", ["a", "b"], undefined, 3), /^Corefile:3 - .*'view' takes 1 argument/],
    [dir("view", ["a"], [dir("expr", [], undefined, 4)]), /^Corefile:4 - .*'expr' takes at least 1/],
    [dir("view", ["a"], [dir("match", ["true"], undefined, 5)]), /^Corefile:5 - .*unknown property 'match'/],
    [
      dir("view", ["a"], [dir("expr", ["client_ip()", "==", "1"], undefined, 6)]),
      /^Corefile:6 - .*view: expr 'client_ip\(\) == 1': '==' at column 13 compares a string with a int/,
    ],
  ]);
});
