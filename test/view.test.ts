// view and metadata end to end: one Corefile answers clients on 127.0.0.1, 127.0.0.2 and any other
// loopback address differently for the same name, asked again and again so the answer store (the
// kubernetes plugin's wire-lane replies, `cache`'s) is what answers, and never with another view's
// reply. One view is chosen by a metadata label (the namespace of the pod that asked); log lines carry
// labels too (the pod that asked, the service asked about, the view).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { parseDig, type DigResult } from "./helpers/dig.ts";
import { queryMsg } from "./helpers/query-msg.ts";
import { pino } from "pino";
import { Instance } from "../src/server/instance.ts";
import { parseCorefile } from "../src/corefile/parser.ts";
import { plugins } from "../src/plugins/index.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Rcode, Type } from "../src/dns/constants.ts";
import { registry } from "../src/metrics/registry.ts";

const run = promisify(execFile);

/** A service, and a pod whose address is 127.0.0.2: a client on that address is that pod. */
const OBJECTS = JSON.stringify({
  apiVersion: "v1",
  kind: "List",
  items: [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-b" } },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "default" },
      spec: {
        clusterIP: "10.96.0.20",
        clusterIPs: ["10.96.0.20"],
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "client-b", namespace: "team-b" },
      spec: {},
      status: { phase: "Running", podIP: "127.0.0.2", podIPs: [{ ip: "127.0.0.2" }] },
    },
  ],
});

const LOG = `log . "{remote} {name} view={/view/name} ns={/kubernetes/client-namespace} pod={/kubernetes/client-pod-name} svc={/kubernetes/service} kind={/kubernetes/kind} none={/nothing/here}"`;

// Blocks with a view first, then the catch-all: the first that matches answers.
const COREFILE = `cluster.local {
    view inside {
        expr incidr(client_ip(), '127.0.0.1/32')
    }
    metadata
    ${LOG}
    kubernetes cluster.local {
        objects objects.json
        pods verified
    }
}
cluster.local {
    view team-b {
        expr metadata('kubernetes/client-namespace') == 'team-b' && type() in ['A', 'AAAA']
    }
    metadata
    ${LOG}
    cache 30
    kubernetes cluster.local {
        objects objects.json
        pods verified
        fallthrough
    }
    template IN A cluster.local {
        answer "{{ .Name }} 60 IN A 192.0.2.2"
    }
}
cluster.local {
    log
    template IN A cluster.local {
        answer "{{ .Name }} 60 IN A 192.0.2.3"
    }
}
`;

/** dig from a loopback source address. */
async function digFrom(port: number, from: string, name: string, ...opts: string[]): Promise<DigResult> {
  const args = ["@127.0.0.1", "-b", from, "-p", String(port), name, "A", "+tries=1", "+time=3", ...opts];
  const { stdout } = await run("dig", args, { timeout: 15_000 });
  return parseDig(stdout);
}

const rdata = (r: DigResult) => r.answer.map((l) => l.split(/\s+/).at(-1)).join(",");

describe("view: one Corefile, two client networks", () => {
  let srv: RunningServer;
  before(async () => {
    srv = await startServer(COREFILE, { files: { "objects.json": OBJECTS }, timeoutMs: 60_000 });
  });
  after(async () => {
    assert.equal(await srv.stop(), 0);
  });

  it("answers each client from its own view, on every repeat, over UDP and TCP, with and without EDNS", async () => {
    const want: Record<string, string> = {
      "127.0.0.1": "10.96.0.20", // kubernetes, in the wire lane, kept until the name changes
      "127.0.0.2": "192.0.2.2", // team-b's pod (metadata): its kubernetes falls through to template; kept by cache
      "127.0.0.3": "192.0.2.3", // no view matches: the catch-all
    };
    const variants = [[], ["+tcp"], ["+noedns"], ["+dnssec"]];
    for (let round = 0; round < 4; round++) {
      for (const opts of variants) {
        for (const from of Object.keys(want)) {
          const r = await digFrom(srv.port, from, "web.default.svc.cluster.local", ...opts);
          assert.equal(r.status, "NOERROR", `${from} ${opts.join(" ")} round ${round}`);
          assert.equal(rdata(r), want[from], `${from} ${opts.join(" ")} round ${round}: ${r.text}`);
        }
      }
    }
    // The repeats were replays from the answer store, for each view.
    const lines = srv.logs.filter((l) => l.name === "web.default.svc.cluster.local.");
    for (const from of Object.keys(want)) {
      const mine = lines.filter((l) => l.remote === from);
      assert.equal(mine.length, 4 * variants.length, from);
      assert.ok(mine.filter((l) => l.cached === true).length >= 8, `${from}: replays from the answer store`);
    }
  });

  it("a question the view's expression leaves out goes to the next block", async () => {
    // team-b's view takes A and AAAA only: its TXT goes to the catch-all, whose template has no TXT.
    const args = [
      "@127.0.0.1",
      "-b",
      "127.0.0.2",
      "-p",
      String(srv.port),
      "web.default.svc.cluster.local",
      "SRV",
    ];
    const { stdout } = await run("dig", [...args, "+tries=1", "+time=3"], { timeout: 15_000 });
    const logged = srv.logs.filter((l) => l.remote === "127.0.0.2" && l.type === "SRV");
    assert.equal(parseDig(stdout).answer.length, 0);
    assert.equal(logged.length, 1);
    assert.doesNotMatch(String(logged[0].msg), /view=/, "the catch-all's log line (the common format)");
  });

  it("log fills metadata placeholders: the pod that asked, the service asked about, the view", async () => {
    await digFrom(srv.port, "127.0.0.2", "web.default.svc.cluster.local");
    await digFrom(srv.port, "127.0.0.1", "web.default.svc.cluster.local");
    const msg = (from: string) =>
      srv.logs.filter((l) => l.remote === from && l.name === "web.default.svc.cluster.local.").at(-1)!.msg;
    assert.equal(
      msg("127.0.0.2"),
      "127.0.0.2 web.default.svc.cluster.local. view=team-b ns=team-b pod=client-b svc=web kind=svc none=-",
    );
    // 127.0.0.1 is no pod's address: the client's labels have no value.
    assert.equal(
      msg("127.0.0.1"),
      "127.0.0.1 web.default.svc.cluster.local. view=inside ns=- pod=- svc=web kind=svc none=-",
    );
  });
});

describe("view: choosing the block, in process", () => {
  const COREFILE_ORDER = `example.org {
    view lab {
        expr incidr(client_ip(), '10.1.0.0/16')
    }
    prometheus 127.0.0.1:0
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.1"
    }
}
. {
    template IN A {
        answer "{{ .Name }} 60 IN A 192.0.2.9"
    }
}
. {
    view never {
        expr true
    }
    template IN A {
        answer "{{ .Name }} 60 IN A 192.0.2.7"
    }
}
`;
  let inst: Instance;
  const lines: { msg: string; at?: string }[] = [];
  before(async () => {
    const log = pino({ level: "warn" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    inst = await Instance.create({
      blocks: parseCorefile(COREFILE_ORDER, "Corefile"),
      plugins,
      root: ".",
      defaultPort: 0,
      log,
    });
  });

  const ask = async (name: string, from: string) => {
    const peer = {
      proto: "udp" as const,
      remoteAddress: from,
      remotePort: 5353,
      localAddress: "127.0.0.1",
      localPort: 53,
    };
    const reply = await inst.pipelines[0].handle(encode(queryMsg(name, Type.A)), peer);
    const m = decode(reply!);
    return m.rcode === Rcode.NOERROR ? String((m.answer[0]?.data as { address?: string }).address) : m.rcode;
  };

  it("a zone none of whose views matches leaves the query to the zones above", async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(await ask("www.example.org.", "10.1.2.3"), "192.0.2.1");
      assert.equal(await ask("www.example.org.", "10.2.2.3"), "192.0.2.9");
    }
  });

  it("a view block after a block without a view is never asked, and start-up says so", async () => {
    assert.equal(await ask("www.example.net.", "10.1.2.3"), "192.0.2.9");
    assert.ok(lines.some((l) => l.at === "Corefile:15" && /never asked/.test(l.msg)));
  });

  it("the block's metrics carry its view's name", async () => {
    const text = await registry.metrics();
    assert.match(
      text,
      /coredns_dns_requests_total\{server="dns:\/\/:0",zone="example\.org\.",view="lab",[^}]*\} 3/,
    );
  });
});

describe("view: limits", () => {
  it("more views than the key's octet holds is a start-up error at the view that is one too many", async () => {
    const block = (i: number) => `. {\n    view v${i} {\n        expr true\n    }\n    whoami\n}\n`;
    const text = Array.from({ length: 256 }, (_, i) => block(i)).join("");
    await assert.rejects(
      Instance.create({
        blocks: parseCorefile(text, "Corefile"),
        plugins,
        root: ".",
        defaultPort: 0,
        log: pino({ level: "silent" }),
      }),
      (e: Error) => /^Corefile:1532 - .*view: more than 255 views in one Corefile/.test(e.message),
    );
  });
});
