// The insights listener: the page (/), its script and style, and the JSON API (/api/insights?window=
// 1m|10m|1h). With a token every path needs `Authorization: Bearer TOKEN`, compared in constant time.

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { reply, serveWhileRunning, type ListenArgument } from "../../http/listener.ts";
import type { SetupContext } from "../../setup/context.ts";
import type { Insights } from "./insights.ts";
import { report, WINDOW_NAMES } from "./report.ts";
import type { WindowName } from "./counters.ts";
import { PAGE_HTML, PAGE_JS, PAGE_CSS } from "./page.ts";

export const API_PATH = "/api/insights";

export interface ServeInsightsOptions {
  token: string | undefined;
  /** Entries per top list. */
  top: number;
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const got = Buffer.from(req.headers.authorization ?? "");
  const want = Buffer.from(`Bearer ${token}`);
  return got.length === want.length && timingSafeEqual(got, want);
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
    // The page loads nothing from elsewhere, and says so to the browser.
    "Content-Security-Policy": "default-src 'self'",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(body);
}

export function serveInsights(
  ctx: SetupContext,
  listen: ListenArgument,
  ins: Insights,
  o: ServeInsightsOptions,
): void {
  const guard =
    (route: (req: IncomingMessage, res: ServerResponse) => void) =>
    (req: IncomingMessage, res: ServerResponse) => {
      if (!authorized(req, o.token)) {
        res.setHeader("WWW-Authenticate", 'Bearer realm="clusterdns insights"');
        reply(res, 401, "401 unauthorized: send Authorization: Bearer TOKEN\n");
        return;
      }
      route(req, res);
    };
  serveWhileRunning(
    ctx,
    listen,
    API_PATH,
    guard((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const w = url.searchParams.get("window") ?? "1m";
      if (!WINDOW_NAMES.includes(w as WindowName)) {
        reply(res, 400, `window must be one of ${WINDOW_NAMES.join(", ")}\n`);
        return;
      }
      send(res, "application/json", JSON.stringify(report(ins, w as WindowName, o.top)));
    }),
  );
  // The page itself holds no data: it is open, and sends the token (from #token=... in its address)
  // with its API calls.
  serveWhileRunning(ctx, listen, "/", (_req, res) => send(res, "text/html; charset=utf-8", PAGE_HTML));
  serveWhileRunning(ctx, listen, "/insights.js", (_req, res) => send(res, "text/javascript", PAGE_JS));
  serveWhileRunning(ctx, listen, "/insights.css", (_req, res) => send(res, "text/css", PAGE_CSS));
}
