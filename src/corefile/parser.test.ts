import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { loadCorefile, parseCorefile } from "./parser.ts";
import { ConfigError } from "./errors.ts";
import { checkDirectives } from "./check.ts";
import type { Directive } from "./types.ts";

const KUBEADM = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;

/** A directive as [line, name, ...args] with its block's lines nested after, for compact assertions. */
type Shape = (string | number | Shape[])[];
const shape = (d: Directive): Shape => {
  const s: Shape = [d.line, d.name, ...d.args.map((a) => a.text)];
  if (d.block) s.push(d.block.map(shape));
  return s;
};
const parse = (text: string, env: Record<string, string | undefined> = {}) =>
  parseCorefile(text, "Corefile", { env });

/** Asserts a ConfigError at file:line whose message matches. */
function fails(fn: () => unknown, where: string, why: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.ok(e.message.startsWith(`${where} - Error during parsing: `), e.message);
    assert.match(e.message, why);
    return true;
  });
}

/** A temporary folder holding `files`, removed after the test. */
function folder(t: TestContext, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "corefile-test-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test("the kubeadm default Corefile", () => {
  const blocks = parse(KUBEADM);
  assert.equal(blocks.length, 1);
  const [b] = blocks;
  assert.deepEqual(
    b.keys.map((k) => k.text),
    [".:53"],
  );
  assert.deepEqual([b.file, b.line], ["Corefile", 1]);
  assert.deepEqual(b.directives.map(shape), [
    [2, "errors"],
    [3, "health", [[4, "lameduck", "5s"]]],
    [6, "ready"],
    [
      7,
      "kubernetes",
      "cluster.local",
      "in-addr.arpa",
      "ip6.arpa",
      [
        [8, "pods", "insecure"],
        [9, "fallthrough", "in-addr.arpa", "ip6.arpa"],
        [10, "ttl", "30"],
      ],
    ],
    [12, "prometheus", ":9153"],
    [13, "forward", ".", "/etc/resolv.conf", [[14, "max_concurrent", "1000"]]],
    [
      16,
      "cache",
      "30",
      [
        [17, "disable", "success", "cluster.local"],
        [18, "disable", "denial", "cluster.local"],
      ],
    ],
    [20, "loop"],
    [21, "reload"],
    [22, "loadbalance"],
  ]);
  const ttl = b.directives[3].block![2];
  assert.deepEqual(ttl.args[0], { text: "30", file: "Corefile", line: 10, quoted: false });
  assert.equal(b.directives[0].block, undefined);
});

test("blocks nest two deep and more; one-line blocks work", () => {
  const [b] = parse(
    ". {\n  rewrite {\n    name {\n      exact a b\n      deeper {\n        x\n      }\n    }\n  }\n  health { lameduck 5s }\n}\n",
  );
  assert.deepEqual(b.directives.map(shape), [
    [
      2,
      "rewrite",
      [
        [
          3,
          "name",
          [
            [4, "exact", "a", "b"],
            [5, "deeper", [[6, "x"]]],
          ],
        ],
      ],
    ],
    [10, "health", [[10, "lameduck", "5s"]]],
  ]);
  assert.deepEqual(parse(". { errors }")[0].directives.map(shape), [[1, "errors"]]);
  assert.deepEqual(parse(". {\n  health {\n  }\n}")[0].directives[0].block, []);
});

test("quoted words, a quoted brace and comments", () => {
  const [b] = parse(
    '# the cluster\n. { # root\n  template IN A "{" {\n    answer "{{ .Name }} 60 IN A 1.2.3.4" # comment\n  }\n  errors "#x" # y\n}\n',
  );
  assert.deepEqual(b.directives.map(shape), [
    [3, "template", "IN", "A", "{", [[4, "answer", "{{ .Name }} 60 IN A 1.2.3.4"]]],
    [6, "errors", "#x"],
  ]);
  assert.equal(b.directives[0].args[2].quoted, true);
});

test("environment references in both forms; unknown ones become empty", (t) => {
  const env = { ZONE: "cluster.local", PORT: "1053", UP: "10.0.0.1", TTL: "30" };
  const [b] = parse("{$ZONE}:{%PORT%} {\n  forward . {$UP}:53 {%NOPE%}x\n  cache {$TTL}{$MISSING}\n}", env);
  assert.deepEqual(
    b.keys.map((k) => k.text),
    ["cluster.local:1053"],
  );
  assert.deepEqual(b.directives.map(shape), [
    [2, "forward", ".", "10.0.0.1:53", "x"],
    [3, "cache", "30"],
  ]);
  // The default environment is process.env.
  process.env.CLUSTERDNS_PARSER_TEST = "example.org";
  t.after(() => delete process.env.CLUSTERDNS_PARSER_TEST);
  assert.equal(parseCorefile("{$CLUSTERDNS_PARSER_TEST} {\n}", "f")[0].keys[0].text, "example.org");
});

test("several keys per block: spaces, commas, a trailing comma continues the line", () => {
  const blocks = parse("a.org b.org,c.org,\n  d.org, dns://e.org:53 {\n  errors\n}\nf.org\n{\n  log\n}");
  assert.deepEqual(
    blocks.map((b) => b.keys.map((k) => [k.text, k.line])),
    [
      [
        ["a.org", 1],
        ["b.org", 1],
        ["c.org", 1],
        ["d.org", 2],
        ["dns://e.org:53", 2],
      ],
      [["f.org", 5]],
    ],
  );
  assert.deepEqual(blocks[1].directives.map(shape), [[7, "log"]]);
});

test("a single server block may leave out its braces", () => {
  const [b, ...rest] = parse(".:1053\nerrors\nforward . 1.1.1.1 {\n  max_fails 2\n}\n");
  assert.equal(rest.length, 0);
  assert.deepEqual(b.directives.map(shape), [
    [2, "errors"],
    [3, "forward", ".", "1.1.1.1", [[4, "max_fails", "2"]]],
  ]);
});

test("a Corefile with no server block is an error naming the file: nothing would be served", () => {
  for (const text of ["", "  \n# only a comment\n", "(common) {\n  errors\n}\n"]) {
    assert.throws(
      () => parse(text),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        assert.equal(e.message, "Corefile: the Corefile has no server block: nothing would be served");
        return true;
      },
      JSON.stringify(text),
    );
  }
});

test("snippets are imported inside blocks and at the top level, keeping their own lines", () => {
  const text = `(common) {
  errors
  cache 30
}
(server) {
  other.org {
    import common
  }
}
. {
  import common
  health { lameduck 5s }
}
import server
`;
  const blocks = parse(text);
  assert.deepEqual(blocks[0].directives.map(shape), [
    [2, "errors"],
    [3, "cache", "30"],
    [12, "health", [[12, "lameduck", "5s"]]],
  ]);
  assert.deepEqual(
    blocks[1].keys.map((k) => k.text),
    ["other.org"],
  );
  assert.deepEqual(blocks[1].directives.map(shape), [
    [2, "errors"],
    [3, "cache", "30"],
  ]);
  // A one-line snippet body starts a line of its own where it is imported.
  assert.deepEqual(parse("(s) { log }\n. {\n  import s\n  errors\n}")[0].directives.map(shape), [
    [1, "log"],
    [4, "errors"],
  ]);
});

test("file imports: relative to the importing file, globs, nested folders, symlinks", (t) => {
  const dir = folder(t, {
    Corefile: ". {\n  import conf.d/*.conf\n  errors\n}\nimport servers/*.server\nimport missing/*.server\n",
    "conf.d/a.conf": "# a\nlog\n",
    "conf.d/b.conf": "cache 30 {\n  success 100\n}\n",
    "conf.d/skip.txt": "bogus\n",
    "servers/one.server": "one.org {\n  import ../shared/bits\n}\n",
    "shared/bits": "whoami\n",
    "data/two.server": "two.org {\n  loop\n}\n",
  });
  mkdirSync(join(dir, "servers", "sub.server")); // a folder that matches the pattern is skipped
  symlinkSync(join(dir, "data", "two.server"), join(dir, "servers", "two.server"));
  const warnings: string[] = [];
  const warn = (w: { file: string; line: number; message: string }) =>
    warnings.push(`${w.file.slice(dir.length + 1)}:${w.line} ${w.message}`);
  const blocks = loadCorefile(join(dir, "Corefile"), { env: {}, warn });
  // As CoreDNS warns: the pattern runs, and imports nothing.
  assert.deepEqual(warnings, ["Corefile:6 No files matching import glob pattern: missing/*.server"]);
  assert.deepEqual(
    blocks.map((b) => b.keys[0].text),
    [".", "one.org", "two.org"],
  );
  const where = (d: Directive) => [d.name, d.file.slice(dir.length + 1), d.line];
  assert.deepEqual(blocks[0].directives.map(where), [
    ["log", "conf.d/a.conf", 2],
    ["cache", "conf.d/b.conf", 1],
    ["errors", "Corefile", 3],
  ]);
  assert.deepEqual(blocks[0].directives[1].block!.map(where), [["success", "conf.d/b.conf", 2]]);
  assert.deepEqual(blocks[1].directives.map(where), [["whoami", "shared/bits", 1]]);
  assert.deepEqual(blocks[2].directives.map(where), [["loop", "servers/two.server", 2]]);
});

test("import errors: missing file or snippet, cycles, unbalanced imported files", (t) => {
  const dir = folder(t, {
    missing: ". {\n  errors\n  import nothing-here\n}\n",
    self: ". {\n  import self\n}\n",
    a: ". {\n  import b\n}\n",
    b: "log\nimport a\n",
    open: ". {\n  import open.part\n  errors\n}\n",
    "open.part": "cache {\n",
    close: ". {\n  import close.part\n}\n",
    "close.part": "log\n}\n",
    args: ". {\n  import b extra\n}\n",
    bare: ". {\n  import\n}\n",
  });
  const load = (name: string) => () => loadCorefile(join(dir, name), { env: {} });
  fails(load("missing"), `${join(dir, "missing")}:3`, /no snippet or file named 'nothing-here'/);
  fails(load("self"), `${join(dir, "self")}:2`, /import cycle/);
  fails(
    load("a"),
    `${join(dir, "b")}:2`,
    new RegExp(`import cycle: ${join(dir, "a")} -> ${join(dir, "b")} -> ${join(dir, "a")}`),
  );
  fails(load("open"), `${join(dir, "open.part")}:1`, /never closed/);
  fails(load("close"), `${join(dir, "close.part")}:2`, /unexpected '}'/);
  fails(load("args"), `${join(dir, "args")}:2`, /import takes one argument/);
  fails(load("bare"), `${join(dir, "bare")}:2`, /import needs/);
  fails(
    () => parse("(s) {\n  import s\n}\n. {\n  import s\n}"),
    "Corefile:2",
    /import cycle: .*\(s\) -> \(s\)/,
  );
  fails(() => parse("(s) {\n}\n(s) {\n}"), "Corefile:3", /defined twice/);
  fails(() => parse("(s)\n. {\n}"), "Corefile:1", /needs a '\{ ... \}' body/);
  fails(() => parse(". {\n  import */x\n}"), "Corefile:2", /wildcards may appear only in the file name/);
});

test("unknown directives are errors at their file:line; nested names are the plugin's business", () => {
  const known = new Map([
    ["errors", 1],
    ["health", 1],
  ]);
  const check = (text: string) => checkDirectives(parse(text), known);
  assert.equal(parse(". {\n  errors\n  bogus 1 2\n}").length, 1, "parsing alone does not know plugins");
  fails(() => check(". {\n  errors\n  bogus 1 2\n}"), "Corefile:3", /Unknown directive 'bogus'/);
  fails(() => check("a.org {\n}\nb.org {\n  health{\n}"), "Corefile:4", /Unknown directive 'health\{'/);
  check(". {\n  health {\n    bogus\n  }\n}");
});

test("a plugin of CoreDNS that clusterdns does not have is named as such, at its file:line", () => {
  const known = new Map([["errors", 1]]);
  const check = (text: string) => checkDirectives(parse(text), known, new Set(["pprof"]));
  fails(
    () => check(". {\n  errors\n  pprof {\n    block 1\n  }\n}"),
    "Corefile:3",
    /plugin pprof of CoreDNS is not supported by clusterdns: Go's profiler; Node has `--cpu-prof` and `--inspect` \(see docs\/compatibility\.md\)$/,
  );
  fails(() => check(". {\n  bogus\n}"), "Corefile:2", /Unknown directive 'bogus'/);
});

test("unbalanced braces and bad structure are errors at file:line", () => {
  fails(() => parse(". {\n  errors\n"), "Corefile:1", /never closed/);
  // One '}' short: the outermost '{' is the one left open.
  fails(() => parse(". {\n  cache {\n    success 1\n}"), "Corefile:1", /never closed/);
  fails(() => parse("}\n"), "Corefile:1", /unexpected '}' without a matching '\{'/);
  fails(() => parse(". {\n}\n}"), "Corefile:3", /unexpected '}'/);
  fails(() => parse(".:53\nerrors\n}"), "Corefile:3", /unexpected '}'/);
  fails(() => parse("{\n}"), "Corefile:1", /at least one key/);
  fails(() => parse('"" {\n}'), "Corefile:1", /at least one key/);
  fails(() => parse("a.org,\n{\n}"), "Corefile:2", /another server block key/);
  fails(() => parse(". {\n}\nb.org\nerrors"), "Corefile:3", /expected '\{'/);
  fails(() => parse(". {\n  cache\n  {\n  }\n}"), "Corefile:3", /block opens on the line of its directive/);
  fails(() => parse(". {\n  health { lameduck 5s } ready\n}"), "Corefile:2", /unexpected 'ready' after '}'/);
  fails(() => parse('. {\n  errors "open\n}\n'), "Corefile:2", /unterminated/);
});

test("keys are checked while parsing: bad keys and duplicates", () => {
  fails(() => parse("quic://.:853 {\n}"), "Corefile:1", /DNS over QUIC is not served/);
  assert.equal(parse("tls://.:853 {\n}").length, 1);
  fails(
    () => parse(".:53 {\n}\n\n.:53 {\n}"),
    "Corefile:4",
    /zone \. on port 53 is already defined at Corefile:1/,
  );
  assert.equal(parse(".:53 {\n}\n.:1053 {\n}").length, 2);
});

test("a mounted folder: paths under it, in imports and arguments, are read from the folder laid out like it", (t) => {
  const dir = folder(t, { "custom/a.override": "log\n", NodeHosts: "192.0.2.1 node1\n" });
  const blocks = parseCorefile(
    ". {\n  import custom/*.override\n  import /etc/coredns/custom/*.override\n  hosts /etc/coredns/NodeHosts\n}\n",
    "coredns.yaml",
    { env: {}, dir, mount: { at: "/etc/coredns", dir } },
  );
  const d = blocks[0].directives;
  assert.deepEqual(
    d.map((x) => [x.name, x.file, x.args.map((a) => a.text)]),
    [
      ["log", join(dir, "custom", "a.override"), []],
      ["log", join(dir, "custom", "a.override"), []],
      ["hosts", "coredns.yaml", [join(dir, "NodeHosts")]],
    ],
  );
});
