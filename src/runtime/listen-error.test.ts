import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { listenErrorText } from "./listen-error.ts";

const inUse = (port?: number) => Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE", port });

test("a port in use names what usually holds it, and how to see which process does", () => {
  assert.match(
    listenErrorText(inUse(53)),
    /^the address is in use: usually systemd-resolved, dnsmasq or another DNS server holds port 53 \(see which: ss -lntup 'sport = :53'\)$/,
  );
  assert.match(
    listenErrorText(inUse(), 8080),
    /health endpoint of another clusterdns or CoreDNS.* port 8080/,
  );
  assert.match(listenErrorText(inUse(), 8181), /ready endpoint of another clusterdns or CoreDNS/);
  assert.match(listenErrorText(inUse(), 9153), /metrics of another clusterdns or CoreDNS/);
  assert.match(listenErrorText(inUse(40000)), /usually another process holds port 40000/);
  // The port asked for wins over the error's (a port 0 listener reports none).
  assert.match(listenErrorText(inUse(40000), 53), /DNS server holds port 53/);
  assert.doesNotMatch(listenErrorText(inUse(8080)), /DNS server/, "8080 is no DNS port");
});

test("Node's own EADDRINUSE carries the port the hint needs", async (t) => {
  const first = createServer();
  await new Promise<void>((r) => first.listen(0, "127.0.0.1", r));
  t.after(() => first.close());
  const port = (first.address() as AddressInfo).port;
  const err = await new Promise<unknown>((resolve) => {
    const second = createServer();
    second.once("error", resolve);
    second.listen(port, "127.0.0.1");
  });
  assert.match(listenErrorText(err), new RegExp(`another process holds port ${port}`));
});

test("permission denied and a missing address say what to do", () => {
  assert.match(
    listenErrorText(Object.assign(new Error("x"), { code: "EACCES" })),
    /NET_BIND_SERVICE.*-dns\.port 1053/,
  );
  assert.match(
    listenErrorText(
      Object.assign(new Error("x"), { code: "EACCES" }),
      53,
      "or change the port of '.:53' at Corefile:1",
    ),
    /NET_BIND_SERVICE capability; or change the port of '\.:53' at Corefile:1\)$/,
  );
  assert.equal(
    listenErrorText(Object.assign(new Error("x"), { code: "EADDRNOTAVAIL" })),
    "this machine has no such address",
  );
});
