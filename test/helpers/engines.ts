// The UDP engines the UDP tests run on (src/server/udp-engine.ts). On Linux both: the batched one is
// built by `npm ci`, and a test run where it failed to build fails here rather than skipping it.

import type { UdpEngineName } from "../../src/cli-flags.ts";

export const UDP_ENGINES: UdpEngineName[] = process.platform === "linux" ? ["dgram", "batched"] : ["dgram"];

/** The flags that start clusterdns on `engine`. */
export const engineArgs = (engine: UdpEngineName) => ["-udp.engine", engine];
