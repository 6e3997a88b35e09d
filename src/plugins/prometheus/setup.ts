// prometheus [ADDRESS]: serves the process's metrics at http://ADDRESS/metrics (default
// localhost:9153) and counts every query of this server block. Blocks naming the same address share
// one listener; the registry (src/metrics/registry.ts) outlives reloads.

import type { Setup } from "../../plugin.ts";
import { parseListenAddress, reply, serveWhileRunning } from "../../http/listener.ts";
import { argCount, noBlock } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import { registry } from "../../metrics/registry.ts";
import { queryRecorder } from "../../metrics/query-stats.ts";

const NAME = "prometheus";
export const DEFAULT_METRICS_ADDRESS = "localhost:9153";
export const METRICS_PATH = "/metrics";

export const setup: Setup = (d, ctx) => {
  argCount(d, NAME, 0, 1);
  noBlock(d, NAME);
  const at = d.args[0] ?? d;
  const addr = parseListenAddress(d.args[0]?.text ?? DEFAULT_METRICS_ADDRESS);
  if (typeof addr === "string") throw configError(at, NAME, addr);

  ctx.onQueryDone(queryRecorder(ctx.block.directives));

  serveWhileRunning(ctx, at, NAME, addr, METRICS_PATH, (_req, res) => {
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "Content-Type": registry.contentType });
        res.end(text);
      },
      (err: unknown) => reply(res, 500, `${(err as Error).message}\n`),
    );
  });
  return undefined;
};
