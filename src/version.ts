// The version clusterdns reports (-version, chaos, coredns_build_info): package.json's.

import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
