// prometheus [ADDRESS]: serves the process's metrics at http://ADDRESS/metrics (default
// localhost:9153) and counts every query of this server block. Blocks naming the same address share
// one listener; the registry (src/metrics/registry.ts) outlives reloads.

import type { Setup } from "../../setup/registry.ts";
import { listenArgument, reply, serveWhileRunning } from "../../http/listener.ts";
import { noBlock } from "../../corefile/args.ts";
import { registry, scrape } from "../../metrics/registry.ts";
import { markPluginsEnabled, queryRecorder } from "../../metrics/query-stats.ts";
import { droppedQueries } from "../../metrics/server-stats.ts";

const NAME = "prometheus";
export const DEFAULT_METRICS_ADDRESS = "localhost:9153";
export const METRICS_PATH = "/metrics";

export const setup: Setup = (d, ctx) => {
  const listen = listenArgument(d, DEFAULT_METRICS_ADDRESS);
  noBlock(d, NAME);

  const view = () => ctx.block.view?.name ?? "";
  ctx.onQueryDone(queryRecorder(view));
  // Queries no block takes are counted once for the process, as CoreDNS's server does.
  droppedQueries.record ??= queryRecorder();
  ctx.onServing(() => {
    const bases = ctx
      .servers()
      .flatMap((server) => ctx.zones.map((zone) => ({ server, zone, view: view() })));
    markPluginsEnabled(ctx.instance, bases, ctx.block.directives);
  });

  // Alone: with -reuseport (a node-local surge) the new process waits for the old one's metrics port
  // instead of sharing it, so a scrape never lands on either process at random.
  serveWhileRunning(
    ctx,
    listen,
    METRICS_PATH,
    (_req, res) => {
      scrape().then(
        (text) => {
          res.writeHead(200, { "Content-Type": registry.contentType });
          res.end(text);
        },
        (err: unknown) => reply(res, 500, `${(err as Error).message}\n`),
      );
    },
    { alone: true },
  );
  return undefined;
};
