// Durations past Node's longest timer (2^31-1 ms, 24.8 days): setTimeout and setInterval fire such a
// wait at once (a TimeoutOverflowWarning), so `reload 1000h`, meant as "hardly ever", checked every
// millisecond. Each duration that is waited out with a timer is capped (parseTimerDuration).

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";

test("1000h in every timer option: no timer overflows, and the server answers", async () => {
  const srv = await startServer(
    `example.org {
    reload 1000h 1000h
    health 127.0.0.1:0 {
        lameduck 1000h
    }
    errors {
        consolidate 1000h ".*"
    }
    cancel 1000h
    hosts hosts.txt {
        reload 1000h
        fallthrough
    }
    file db.example.org {
        reload 1000h
    }
}
auto.example {
    auto {
        directory zones
        reload 1000h
    }
}
example.net {
    forward . 127.0.0.1:9 {
        expire 1000h
        health_check 1000h
    }
}
`,
    {
      files: {
        "hosts.txt": "192.0.2.1 h.example.org\n",
        "db.example.org": zoneText("example.org", "www 60 IN A 192.0.2.2"),
        "zones/db.auto.example": zoneText("auto.example", "www 60 IN A 192.0.2.3"),
      },
    },
  );
  try {
    await sleep(1500);
    assert.deepEqual((await dig(srv.port, "h.example.org")).answer, ["h.example.org. 3600 IN A 192.0.2.1"]);
    assert.deepEqual((await dig(srv.port, "www.example.org")).answer, ["www.example.org. 60 IN A 192.0.2.2"]);
    assert.doesNotMatch(srv.stderr(), /TimeoutOverflowWarning/);
  } finally {
    srv.proc.kill("SIGKILL");
  }
});
