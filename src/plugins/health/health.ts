// health: the liveness endpoint. GET /health answers 200 "OK" for as long as the process serves,
// lameduck included (readiness, not liveness, is what turns off first).

import type { Route } from "../../http/listener.ts";
import { reply } from "../../http/listener.ts";

export const HEALTH_PATH = "/health";

export const healthRoute: Route = (_req, res) => reply(res, 200, "OK");
