// A real DNS-over-HTTPS upstream for forward's tests: Debian's unbound (built with libnghttp2) serving
// DoH (HTTP/2, RFC 8484) at https://127.0.0.1:PORT/dns-query, answering who.example.org. TXT from its
// own local data, with a certificate from the test's throwaway CA (tls-front.ts's makePki).

import { connect } from "node:net";
import type { Pki } from "./tls-front.ts";
import { runUnbound, type RunningUnbound } from "./unbound-run.ts";

export type UnboundDoh = RunningUnbound;

/** Starts unbound serving DoH on a free port; who.example.org. TXT is `id`. With `cleartext`, it
 * serves HTTP/2 without TLS (http-notls-downstream, for a TLS front that shows what came in). */
export async function startUnboundDoh(pki: Pki, id = "unbound-doh", cleartext = false): Promise<UnboundDoh> {
  return runUnbound({
    server: ({ port }) => [
      `  https-port: ${port}`,
      `  tls-service-key: "${pki.serverKey}"`,
      `  tls-service-pem: "${pki.serverCert}"`,
      '  http-endpoint: "/dns-query"',
      `  http-notls-downstream: ${cleartext ? "yes" : "no"}`,
      '  module-config: "iterator"',
      '  local-zone: "example.org." static',
      `  local-data: "who.example.org. 60 IN TXT ${id}"`,
      "  access-control: 127.0.0.0/8 allow",
    ],
    // Ready once its port takes connections.
    ready: accepts,
    what: "DoH",
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
