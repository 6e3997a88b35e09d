// A reload that changes a block's `bind` list, without -reuseport: the listeners are kept per address,
// so an address the new configuration keeps answers through the reload (its sockets are handed over,
// not bound again beside the old ones, which the kernel refuses), an added address answers after it,
// and a removed one stops answering. Checked with dig over UDP and TCP, kdig over TLS, and a steady UDP load on
// each address kept.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { digAt } from "./helpers/dig.ts";
import { kdigAt } from "./helpers/kdig.ts";
import { makePki } from "./upstream/tls-front.ts";
import { startLoad, type Load } from "./helpers/load.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { Type } from "../src/dns/constants.ts";

const ONE = "127.0.0.1";
const TWO = "127.0.0.2";

/** One block per entry: its zone, the addresses it binds, and what a.ZONE answers. */
function corefile(...blocks: { zones: string[]; bind: string[]; answer: string }[]): string {
  return blocks
    .map(
      (b) => `${b.zones.join(" ")} {
    bind ${b.bind.join(" ")}
    hosts {
${b.zones.map((z) => `        ${b.answer} a.${z}`).join("\n")}
        reload 0
    }
}
`,
    )
    .join("");
}

/** Writes the Corefile, sends SIGUSR1 and waits for the reload to be applied; a rejection fails. */
async function reload(srv: RunningServer, text: string): Promise<void> {
  writeFileSync(join(srv.dir, "Corefile"), text);
  const logged = (msg: string) => srv.logs.filter((l) => typeof l.msg === "string" && l.msg.startsWith(msg));
  const before = logged("reloaded").length;
  srv.proc.kill("SIGUSR1");
  for (const end = Date.now() + 15_000; logged("reloaded").length === before; await sleep(20)) {
    const rejected = logged("reload: ");
    const last = rejected.at(-1);
    if (last !== undefined && /rejected|stays/.test(String(last.msg)))
      assert.fail(`the reload was rejected: ${String(last.error)}`);
    if (Date.now() > end) assert.fail("no reload within 15 s");
  }
}

/** What `name` A answers at `address`:`port` (dig over UDP, or TCP with "+tcp"): its address, the
 * status when the answer is empty, or "silent" when nothing answers. */
async function ask(address: string, port: number, name: string, ...opts: string[]): Promise<string> {
  try {
    const r = await digAt(address, port, name, "A", "+time=1", ...opts);
    return r.answer.length > 0 ? r.answer[0].split(/\s+/).at(-1)! : r.status;
  } catch {
    return "silent";
  }
}

/** The answer over UDP and over TCP, which must agree. */
async function both(address: string, port: number, name: string): Promise<string> {
  const [udp, tcp] = await Promise.all([ask(address, port, name), ask(address, port, name, "+tcp")]);
  assert.equal(tcp, udp, `${name} at ${address}:${port}: udp says ${udp}, tcp ${tcp}`);
  return udp;
}

/** The loads still running, stopped at the end of a test that failed before it checked them. */
const running = new Set<Load>();

/** A UDP load on `host`, asking a.example.org. every 5 ms; `okRcodes` as startLoad's. */
function loadOn(port: number, host: string, okRcodes = [0]): Load {
  const load = startLoad(port, "a.example.org.", Type.A, { intervalMs: 5, host, okRcodes });
  running.add(load);
  return load;
}

async function stopLoads(): Promise<void> {
  await Promise.all([...running].map((l) => l.stop()));
  running.clear();
}

/** A server on a free port whose one block binds 127.0.0.1 and answers 192.0.2.1; `args` added. */
async function startBound(...args: string[]): Promise<{ srv: RunningServer; port: number }> {
  const port = await freeUdpTcpPort();
  const text = corefile({ zones: ["example.org"], bind: [ONE], answer: "192.0.2.1" });
  return { srv: await startServer(text, { args: ["-dns.port", String(port), ...args] }), port };
}

/** Stops the load and checks no query of it was lost (a timeout) or failed. */
async function noneLost(load: Load, what: string): Promise<void> {
  running.delete(load);
  const r = await load.stop();
  assert.ok(r.sent >= 20, `${what}: a real load (${r.sent} queries)`);
  assert.deepEqual(r.failures, [], `${what}: ${r.failures.length} of ${r.sent} queries failed`);
}

test("bind: adding an address and removing one reload; the address kept answers throughout", async () => {
  const { srv, port } = await startBound();
  try {
    assert.equal(await both(ONE, port, "a.example.org."), "192.0.2.1");
    assert.equal(await both(TWO, port, "a.example.org."), "silent");

    const onOne = loadOn(port, ONE);
    await sleep(100);
    await reload(srv, corefile({ zones: ["example.org"], bind: [ONE, TWO], answer: "192.0.2.2" }));
    await sleep(100);
    await noneLost(onOne, `${ONE}, while ${TWO} was added`);
    assert.equal(await both(ONE, port, "a.example.org."), "192.0.2.2");
    assert.equal(await both(TWO, port, "a.example.org."), "192.0.2.2", "the added address answers");

    const onTwo = loadOn(port, TWO);
    await sleep(100);
    await reload(srv, corefile({ zones: ["example.org"], bind: [TWO], answer: "192.0.2.3" }));
    await sleep(100);
    await noneLost(onTwo, `${TWO}, while ${ONE} was removed`);
    assert.equal(await both(TWO, port, "a.example.org."), "192.0.2.3");
    assert.equal(await both(ONE, port, "a.example.org."), "silent", "the removed address is closed");

    // And back: the address removed is bound again.
    await reload(srv, corefile({ zones: ["example.org"], bind: [ONE], answer: "192.0.2.4" }));
    assert.equal(await both(ONE, port, "a.example.org."), "192.0.2.4");
    assert.equal(await both(TWO, port, "a.example.org."), "silent");
  } finally {
    await stopLoads();
    assert.equal(await srv.stop(), 0);
  }
});

test("bind: zones move between listener groups (merged, then swapped); each address answers throughout", async () => {
  const port = await freeUdpTcpPort();
  const org = (bind: string[]) => ({ zones: ["example.org"], bind, answer: "192.0.2.1" });
  const net = (bind: string[]) => ({ zones: ["example.net"], bind, answer: "192.0.2.2" });
  const srv = await startServer(corefile(org([ONE]), net([TWO])), { args: ["-dns.port", String(port)] });
  // REFUSED (5) is an answer: a zone that moved away is refused, never lost.
  const loads = [ONE, TWO].map((host) => loadOn(port, host, [0, 5]));
  try {
    assert.equal(await both(ONE, port, "a.example.net."), "REFUSED");
    await sleep(100);
    const merged = { zones: ["example.org", "example.net"], bind: [ONE, TWO], answer: "192.0.2.3" };
    await reload(srv, corefile(merged));
    for (const at of [ONE, TWO])
      for (const name of ["a.example.org.", "a.example.net."])
        assert.equal(await both(at, port, name), "192.0.2.3", `${name} at ${at}, merged`);

    await reload(srv, corefile(org([TWO]), net([ONE])));
    assert.equal(await both(TWO, port, "a.example.org."), "192.0.2.1");
    assert.equal(await both(ONE, port, "a.example.org."), "REFUSED");
    assert.equal(await both(ONE, port, "a.example.net."), "192.0.2.2");
    assert.equal(await both(TWO, port, "a.example.net."), "REFUSED");
    await sleep(100);
    for (const [i, load] of loads.entries()) await noneLost(load, [ONE, TWO][i]);
  } finally {
    await stopLoads();
    assert.equal(await srv.stop(), 0);
  }
});

test("bind: a group on port 0 keeps its port through a reload that adds an address", async () => {
  const srv = await startServer(corefile({ zones: ["example.org"], bind: [ONE], answer: "192.0.2.1" }));
  try {
    const port = srv.port;
    const load = loadOn(port, ONE);
    await sleep(100);
    await reload(srv, corefile({ zones: ["example.org"], bind: [TWO, ONE], answer: "192.0.2.2" }));
    await sleep(100);
    await noneLost(load, ONE);
    assert.deepEqual(srv.logs.find((l) => l.msg === "reloaded")?.ports, [port]);
    assert.equal(await both(ONE, port, "a.example.org."), "192.0.2.2");
    assert.equal(await both(TWO, port, "a.example.org."), "192.0.2.2");
  } finally {
    await stopLoads();
    assert.equal(await srv.stop(), 0);
  }
});

test("bind: with -workers 2, an added address answers and a removed one closes", async () => {
  const { srv, port } = await startBound("-workers", "2");
  try {
    const load = loadOn(port, ONE);
    await sleep(100);
    await reload(srv, corefile({ zones: ["example.org"], bind: [ONE, TWO], answer: "192.0.2.2" }));
    await sleep(200);
    await noneLost(load, ONE);
    // Several queries each: the kernel spreads them over the threads' sockets by source port.
    for (let i = 0; i < 6; i++) {
      assert.equal(await ask(ONE, port, "a.example.org."), "192.0.2.2");
      assert.equal(await ask(TWO, port, "a.example.org."), "192.0.2.2");
    }
    await reload(srv, corefile({ zones: ["example.org"], bind: [TWO], answer: "192.0.2.3" }));
    await sleep(200);
    for (let i = 0; i < 4; i++) {
      assert.equal(await ask(TWO, port, "a.example.org."), "192.0.2.3");
      assert.equal(await ask(ONE, port, "a.example.org."), "silent");
    }
  } finally {
    await stopLoads();
    assert.equal(await srv.stop(), 0);
  }
});

test("bind: a tls:// block keeps its kept address's listener and opens the added one (kdig +tls)", async () => {
  const pki = makePki();
  const port = await freeUdpTcpPort();
  const dot = (bind: string[], answer: string) => `tls://example.org:${port} {
    bind ${bind.join(" ")}
    tls ${pki.serverCert} ${pki.serverKey}
    hosts {
        ${answer} a.example.org
        reload 0
    }
}
`;
  const srv = await startServer(dot([ONE], "192.0.2.1"));
  const over = async (at: string) => {
    const r = await kdigAt(at, port, "a.example.org", "A", `+tls-ca=${pki.ca}`, "+tls-hostname=dns.test");
    return r.records[0]?.split(" ").at(-1) ?? (r.status || "silent");
  };
  try {
    assert.equal(await over(ONE), "192.0.2.1");
    assert.equal(await over(TWO), "silent");
    await reload(srv, dot([ONE, TWO], "192.0.2.2"));
    assert.equal(await over(ONE), "192.0.2.2");
    assert.equal(await over(TWO), "192.0.2.2", "the added address answers over TLS");
    await reload(srv, dot([TWO], "192.0.2.3"));
    assert.equal(await over(TWO), "192.0.2.3");
    assert.equal(await over(ONE), "silent", "the removed address is closed");
  } finally {
    assert.equal(await srv.stop(), 0);
    rmSync(pki.dir, { recursive: true, force: true });
  }
});
