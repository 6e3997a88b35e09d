// node:http loaded with require(), not imported as an ES module. Importing a built-in as an ES module
// builds its namespace from every export, and node:http's WebSocket, CloseEvent and MessageEvent are
// lazy getters that load undici (Node's fetch) to answer them: measured on Node 24.22, 2.9 MB more JS
// heap and 14 MB more RSS than require("node:http"), for exports clusterdns never uses. Types come from
// `import type`, which leaves nothing at run time.

import { createRequire } from "node:module";

export const http = createRequire(import.meta.url)("node:http") as typeof import("node:http");
