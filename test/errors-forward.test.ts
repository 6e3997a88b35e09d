// errors in front of forward, on a real server: a query none of forward's upstreams answers (one
// silent, one refusing, one marked down) is still the same SERVFAIL to the client, and `errors` logs
// why, one line per query in CoreDNS's shape ("RCODE NAME TYPE: ERROR"), which `consolidate` counts;
// grpc's failures likewise.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { exchangeUdp } from "./helpers/udp-exchange.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";

const ERROR = "error";
/** A socket that takes queries and never answers. */
let silent: dgram.Socket;
let silentPort: number;
let closedPort: number;
let srv: RunningServer;

before(async () => {
  silent = dgram.createSocket("udp4");
  await new Promise<void>((r) => silent.bind(0, "127.0.0.1", r));
  silentPort = silent.address().port;
  closedPort = await freeUdpTcpPort();
  // One try per query (not CoreDNS's two), so that three failures fit consolidate's 1 s.
  const quick = "read_timeout 300ms\n    max_fails 0\n    max_connect_attempts 1";
  srv = await startServer(`silent.example {
  errors
  forward . 127.0.0.1:${silentPort} {
    ${quick}
  }
}
refused.example {
  errors
  forward . 127.0.0.1:${closedPort} {
    max_fails 0
  }
}
counted.example {
  errors {
    consolidate 1s ".* i/o timeout$"
  }
  forward . 127.0.0.1:${silentPort} {
    ${quick}
  }
}
shown.example {
  errors {
    consolidate 1s "ECONNREFUSED$" warning show_first
  }
  forward . 127.0.0.1:${closedPort} {
    max_fails 0
  }
}
cached.example {
  errors
  cache 30
  forward . 127.0.0.1:${silentPort} {
    ${quick}
  }
}
limited.example {
  errors
  forward . 127.0.0.1:${silentPort} {
    read_timeout 300ms
    max_fails 0
    max_concurrent 1
  }
}
grpc.example {
  errors
  grpc . 127.0.0.1:${closedPort}
}
down.example {
  errors
  forward . 127.0.0.1:${silentPort} {
    read_timeout 300ms
    max_fails 1
    health_check 100ms
    failfast_all_unhealthy_upstreams
  }
}
`);
});

after(async () => {
  await srv.stop();
  silent.close();
});

/** The messages of the error-level lines so far that name `zone`. */
function errorsAbout(zone: string): string[] {
  return srv.logs.filter((l) => l.level === ERROR && String(l.msg).includes(zone)).map((l) => String(l.msg));
}

/** Waits until `cond` holds, polling the log the server writes as it goes. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}; log:\n${srv.logs.map((l) => JSON.stringify(l)).join("\n")}`);
}

/** Asks q1..q3 under `zone`, each answered SERVFAIL. */
async function failThree(zone: string): Promise<void> {
  for (const i of [1, 2, 3]) assert.equal((await dig(srv.port, `q${i}.${zone}`)).status, "SERVFAIL");
}

test("a silent upstream: one error line per query, ending in i/o timeout as CoreDNS's", async () => {
  await failThree("silent.example");
  await until(() => errorsAbout("silent.example.").length >= 3, "three error lines");
  const shape = new RegExp(
    `^2 q[123]\\.silent\\.example\\. A: read udp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${silentPort}: i/o timeout$`,
  );
  const lines = errorsAbout("silent.example.");
  assert.equal(lines.length, 3, lines.join("\n"));
  for (const line of lines) assert.match(line, shape);
  const record = srv.logs.find((l) => l.level === ERROR && l.qname === "q1.silent.example.");
  assert.equal(record?.code, "CDNS_ERR_FORWARD_TIMEOUT");
});

test("the client's SERVFAIL is the one forward gave before errors heard of it, with EDNS or without", async () => {
  for (const zone of ["silent.example.", "refused.example."]) {
    for (const edns of [false, true]) {
      const q = newQuery(`bytes.${zone}`, 1, 1, 4242);
      if (edns) q.edns = { udpSize: 1232, version: 0, do: true, options: [] };
      const query = encode(q);
      const reply = await exchangeUdp(srv.port, query, 3000);
      // The query itself with QR and SERVFAIL (RD echoed): the server's OPT record matches the one asked.
      const want = Buffer.concat([query.subarray(0, 2), Buffer.from([0x81, 0x02]), query.subarray(4)]);
      assert.equal(reply?.toString("hex"), want.toString("hex"), `${zone} edns=${edns}`);
    }
  }
});

test("a refusing upstream: one error line per query with the OS error", async () => {
  await failThree("refused.example");
  await until(() => errorsAbout("q3.refused.example.").length >= 1, "the third query's error line");
  const lines = errorsAbout("refused.example.").filter((l) => /q[123]\./.test(l));
  const shape = new RegExp(
    `^2 q[123]\\.refused\\.example\\. A: udp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${closedPort}: recvmsg ECONNREFUSED$`,
  );
  assert.equal(lines.length, 3, lines.join("\n"));
  for (const line of lines) assert.match(line, shape);
});

test("through cache: the failure is logged each time, not kept (CoreDNS's cache never sees it)", async () => {
  for (let i = 0; i < 2; i++) assert.equal((await dig(srv.port, "again.cached.example")).status, "SERVFAIL");
  await until(() => errorsAbout("again.cached.example.").length >= 2, "two error lines");
  const lines = errorsAbout("again.cached.example.");
  assert.equal(lines.length, 2, "one line per query: each went upstream");
  for (const line of lines) assert.match(line, /^2 again\.cached\.example\. A: read udp .*: i\/o timeout$/);
});

test("consolidate counts the timeouts into one line", async () => {
  await failThree("counted.example");
  const summary = "3 errors like '.* i/o timeout$' occurred in last 1s";
  await until(() => srv.logs.some((l) => l.msg === summary), "the summary line");
  assert.deepEqual(errorsAbout("counted.example."), [], "no line of its own for a counted error");
});

test("consolidate's show_first (CoreDNS 1.14): the first error at once at the level given, then the count", async () => {
  const about = (zone: string) => srv.logs.filter((l) => String(l.msg).includes(zone));
  await failThree("shown.example");
  const summary = "3 errors like 'ECONNREFUSED$' occurred in last 1s";
  await until(() => srv.logs.some((l) => l.msg === summary), "the summary line");
  const first = about("shown.example.");
  assert.equal(first.length, 1, "the first error alone is logged on its own");
  assert.match(String(first[0].msg), /^2 q1\.shown\.example\. A: .*ECONNREFUSED$/);
  assert.equal(first[0].level, "warn", "at the consolidate line's level");
  assert.equal(srv.logs.find((l) => l.msg === summary)?.level, "warn");
  // One error in a period: logged at once, and no summary after it (it would say 1).
  assert.equal((await dig(srv.port, "q4.shown.example")).status, "SERVFAIL");
  await until(() => about("q4.shown.example.").length === 1, "the fourth query's line");
  await new Promise((r) => setTimeout(r, 1300));
  assert.ok(!srv.logs.some((l) => String(l.msg).startsWith("1 errors like")), "no summary of one");
});

test("an upstream marked down, with failfast_all_unhealthy_upstreams: 'no healthy upstream'", async () => {
  assert.equal((await dig(srv.port, "first.down.example")).status, "SERVFAIL");
  await until(
    () => srv.logs.some((l) => l.msg === "upstream failed its health checks: down"),
    "the upstream marked down",
  );
  assert.equal((await dig(srv.port, "later.down.example")).status, "SERVFAIL");
  await until(() => errorsAbout("later.down.example.").length > 0, "the error line");
  assert.deepEqual(errorsAbout("later.down.example."), [
    "2 later.down.example. A: forward: no healthy upstream",
  ]);
});

test("max_concurrent: a query over the limit is REFUSED and logged with its rcode, as CoreDNS's", async () => {
  // The first holds the one slot (its upstream never answers); the two after it are refused at once.
  const first = dig(srv.port, "q0.limited.example");
  await new Promise((r) => setTimeout(r, 50));
  for (const i of [1, 2]) assert.equal((await dig(srv.port, `q${i}.limited.example`)).status, "REFUSED");
  assert.equal((await first).status, "SERVFAIL");
  await until(() => errorsAbout("limited.example.").length >= 3, "three error lines");
  const refused = errorsAbout("limited.example.").filter((l) => l.startsWith("5 "));
  assert.deepEqual(refused.sort(), [
    "5 q1.limited.example. A: forward: concurrent queries exceeded maximum 1",
    "5 q2.limited.example. A: forward: concurrent queries exceeded maximum 1",
  ]);
});

test("grpc: an upstream that refuses the connection is logged as forward's failures are", async () => {
  assert.equal((await dig(srv.port, "q1.grpc.example")).status, "SERVFAIL");
  await until(() => errorsAbout("q1.grpc.example.").length > 0, "the error line");
  const lines = errorsAbout("q1.grpc.example.");
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0], new RegExp(`^2 q1\\.grpc\\.example\\. A: .*ECONNREFUSED.*${closedPort}`));
});
