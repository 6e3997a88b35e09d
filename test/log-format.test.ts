// The log plugin's line formats on a real server, against what CoreDNS prints for the same
// placeholders: `{combined}` ends with the opcode as a number, `{local}` is the server's address.

import { test } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./helpers/server.ts";
import { digAt } from "./helpers/dig.ts";

/** The first log line of `plugin` "log" naming `name`, waiting a little (stdout is asynchronous). */
async function logLine(logs: Record<string, unknown>[], name: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const rec = logs.find((r) => r.plugin === "log" && r.name === name);
    if (rec) return String(rec.msg);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no log line for ${name}`);
}

test("{combined} ends with the opcode as CoreDNS prints it: a number", async () => {
  const srv = await startServer(`example.org {
    log . {combined}
    whoami
}
`);
  try {
    await digAt("127.0.0.1", srv.port, "a.example.org");
    assert.match(await logLine(srv.logs, "a.example.org."), /s "0"$/);
  } finally {
    await srv.stop();
  }
});
test("{local} is the address the server listens on, bracketed for IPv6", async () => {
  const srv = await startServer(`example.org {
    bind 127.0.0.1 ::1
    log . "{local} {remote} {proto}"
    whoami
}
`);
  try {
    await digAt("127.0.0.1", srv.port, "v4.example.org");
    await digAt("::1", srv.port, "v6.example.org", "A", "+tcp");
    assert.equal(await logLine(srv.logs, "v4.example.org."), "127.0.0.1 127.0.0.1 udp");
    assert.equal(await logLine(srv.logs, "v6.example.org."), "[::1] [::1] tcp");
  } finally {
    await srv.stop();
  }
});

test("class: NODATA is a denial, as CoreDNS classifies it, not a success", async () => {
  const srv = await startServer(`example.org {
    log example.org {
        class denial
    }
    hosts {
        192.0.2.1 a.example.org
    }
}
`);
  try {
    await digAt("127.0.0.1", srv.port, "a.example.org", "A");
    await digAt("127.0.0.1", srv.port, "a.example.org", "AAAA");
    await digAt("127.0.0.1", srv.port, "nx.example.org", "A");
    await logLine(srv.logs, "nx.example.org.");
    const logged = srv.logs.filter((r) => r.plugin === "log").map((r) => `${r.name} ${r.type}`);
    assert.deepEqual(logged, ["a.example.org. AAAA", "nx.example.org. A"]);
  } finally {
    await srv.stop();
  }
});

test("{>bufsize} is CoreDNS's request size: 65535 over TCP, at least 512 over UDP", async () => {
  const srv = await startServer(`example.org {
    log . "{proto} {>bufsize}"
    whoami
}
`);
  try {
    await digAt("127.0.0.1", srv.port, "udp.example.org", "A", "+bufsize=1232");
    await digAt("127.0.0.1", srv.port, "tcp.example.org", "A", "+tcp", "+bufsize=1232");
    await digAt("127.0.0.1", srv.port, "small.example.org", "A", "+bufsize=300");
    await digAt("127.0.0.1", srv.port, "plain.example.org", "A", "+noedns");
    assert.equal(await logLine(srv.logs, "udp.example.org."), "udp 1232");
    // CoreDNS's request.Size(): a TCP client takes 64 KiB whatever its EDNS says, and a UDP buffer
    // under 512 counts as 512 (RFC 6891 6.2.5).
    assert.equal(await logLine(srv.logs, "tcp.example.org."), "tcp 65535");
    assert.equal(await logLine(srv.logs, "small.example.org."), "udp 512");
    assert.equal(await logLine(srv.logs, "plain.example.org."), "udp 512");
  } finally {
    await srv.stop();
  }
});
