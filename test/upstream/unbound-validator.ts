// A real validating resolver for dnssec's tests: Debian's unbound with the validator module, a trust
// anchor for each zone the test signs, and those zones stubbed to a server on loopback. A reply it
// could validate carries the AD bit; one it could not is SERVFAIL.

import { digIn } from "../helpers/dig.ts";
import { runUnbound, type RunningUnbound } from "./unbound-run.ts";

export type UnboundValidator = RunningUnbound;

/** Starts unbound on a free port, validating `zones` (name -> DNSKEY record text of the trust anchor)
 * against the server at 127.0.0.1:`serverPort`; inside network namespace `netns` when given (on port
 * 5353 there), where it also follows the zones' referrals to name servers on port 53. */
export async function startUnboundValidator(
  zones: Record<string, string>,
  serverPort: number,
  netns?: string,
): Promise<UnboundValidator> {
  return runUnbound({
    netns,
    server: () => [
      "  do-not-query-localhost: no",
      '  module-config: "validator iterator"',
      "  val-log-level: 2",
      "  access-control: 127.0.0.0/8 allow",
      // Unbound answers the special-use names itself (RFC 6761's test., local. ...) unless told not to.
      ...Object.keys(zones).map((z) => `  local-zone: "${z.split(".").slice(-2).join(".")}" nodefault`),
      ...Object.values(zones).map((anchor) => `  trust-anchor: "${anchor}"`),
    ],
    sections: Object.keys(zones).flatMap((z) => [
      "stub-zone:",
      `  name: "${z}"`,
      `  stub-addr: 127.0.0.1@${serverPort}`,
    ]),
    // Ready once it answers a query of its own (the root's SOA is refused or fails; any reply will do).
    ready: (port) =>
      digIn(netns, "127.0.0.1", port, "localhost", "A").then(
        () => true,
        () => false,
      ),
  });
}
