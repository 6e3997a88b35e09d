// Signals an operator or the platform sends, against CoreDNS's handling of each: SIGHUP is ignored
// (it comes with a closed terminal or a parent's exit, outside the user's control; SIGUSR1 reloads),
// SIGQUIT quits at once with status 0, SIGUSR2 (CoreDNS's in-place upgrade) is refused with a line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";

test("SIGHUP is ignored, as by CoreDNS: the server keeps answering and says so", async () => {
  const srv = await startServer(`example.org {
    hosts {
        192.0.2.1 a.example.org
    }
}
`);
  try {
    srv.proc.kill("SIGHUP");
    await sleep(300);
    assert.equal(srv.proc.exitCode, null, `still running (signal ${srv.proc.signalCode})`);
    assert.deepEqual((await dig(srv.port, "a.example.org")).answer, ["a.example.org. 3600 IN A 192.0.2.1"]);
    assert.ok(srv.logs.some((r) => r.signal === "SIGHUP" && /ignored/.test(String(r.msg))));
  } finally {
    assert.equal(await srv.stop(), 0, "SIGTERM still stops it cleanly");
  }
});

const HOSTS = `example.org {
    hosts {
        192.0.2.1 a.example.org
    }
}
`;

test("SIGQUIT quits at once with status 0 and a line, as CoreDNS", async () => {
  const srv = await startServer(HOSTS);
  srv.proc.kill("SIGQUIT");
  const code = await new Promise<number | null>((r) => srv.proc.once("exit", (c) => r(c)));
  assert.equal(code, 0);
  assert.ok(srv.logs.some((r) => r.signal === "SIGQUIT"));
});

test("SIGUSR2, CoreDNS's binary upgrade, does not end the server (Node's default): it says it is not done", async () => {
  const srv = await startServer(HOSTS);
  try {
    srv.proc.kill("SIGUSR2");
    await sleep(300);
    assert.equal(srv.proc.exitCode, null, `still running (signal ${srv.proc.signalCode})`);
    assert.deepEqual((await dig(srv.port, "a.example.org")).answer, ["a.example.org. 3600 IN A 192.0.2.1"]);
    assert.ok(srv.logs.some((r) => r.signal === "SIGUSR2" && /not/.test(String(r.msg))));
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("while stopping: a second SIGTERM leaves the lameduck to run, a second SIGINT forces the exit (2), as CoreDNS", async () => {
  const corefile = `example.org {
    health 127.0.0.1:0 {
        lameduck 1s
    }
    hosts {
        192.0.2.1 a.example.org
    }
}
`;
  const term = await startServer(corefile);
  const exited = new Promise<number | null>((r) => term.proc.once("exit", (c) => r(c)));
  term.proc.kill("SIGTERM");
  await sleep(200);
  term.proc.kill("SIGTERM");
  await sleep(300);
  assert.equal(term.proc.exitCode, null, "still in its lameduck");
  assert.deepEqual((await dig(term.port, "a.example.org")).answer, ["a.example.org. 3600 IN A 192.0.2.1"]);
  assert.equal(await exited, 0);

  const int = await startServer(corefile);
  const forced = new Promise<number | null>((r) => int.proc.once("exit", (c) => r(c)));
  int.proc.kill("SIGINT");
  await sleep(200);
  int.proc.kill("SIGINT");
  assert.equal(await forced, 2);
});
