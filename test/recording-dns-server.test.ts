// The tests' table server (test/helpers/recording-dns-server.ts) must not leak a socket when it cannot
// open its port: a UDP socket left bound kept a test file running for good.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { createServer, type AddressInfo } from "node:net";
import { serveTable } from "./helpers/recording-dns-server.ts";

test("a port whose TCP side is taken: serveTable fails and leaves the UDP port free", async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  t.after(() => blocker.close());
  const { port } = blocker.address() as AddressInfo;
  await assert.rejects(
    serveTable({}, "127.0.0.1", port, () => {}),
    (err: NodeJS.ErrnoException) => err.code === "EADDRINUSE",
  );
  const udp = createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    udp.once("error", reject);
    udp.bind(port, "127.0.0.1", resolve);
  });
  udp.close();
});
