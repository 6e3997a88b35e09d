// insights [{ listen ADDRESS; token FILE; kubeconfig FILE [CONTEXT]; endpoint URL; cluster_domain ZONE;
//             workloads N; top N }]
//
// Counts this block's queries by the workload that sent them (README.md) and serves the page, the
// JSON API and `clusterdns top` on a listener of its own: localhost:9155 unless told, and only with a
// bearer token anywhere else, since the names pods ask for tell what they do.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Setup } from "../../setup/registry.ts";
import { argCount, blockOptions, onceEach, parseIntArg } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import type { Directive } from "../../corefile/types.ts";
import { canonical, nameToWire } from "../../dns/name.ts";
import { parseListenAddress, type ListenArgument } from "../../http/listener.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import type { ClientOptions } from "../kubernetes/api/api.ts";
import { Insights } from "./insights.ts";
import { serveInsights } from "./http.ts";
import { watchPods } from "./pods.ts";
import { feed, gather, type ThreadLink } from "./threads.ts";
import type { Logger } from "pino";
import { track } from "./metrics.ts";

const NAME = "insights";
export const DEFAULT_INSIGHTS_ADDRESS = "localhost:9155";

interface Config {
  listen: ListenArgument;
  token?: string;
  api: ClientOptions;
  zone: string;
  workloads: number;
  top: number;
}

/** True for a host that only this machine reaches. */
export function isLoopback(host: string | undefined): boolean {
  if (host === undefined) return false;
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function parse(d: Directive, root: string): Config {
  argCount(d, NAME, 0, 0);
  const listen = parseListenAddress(DEFAULT_INSIGHTS_ADDRESS) as ListenArgument["addr"];
  const c: Config = {
    listen: { directive: NAME, at: d, addr: listen },
    api: {},
    zone: "cluster.local.",
    workloads: 2000,
    top: 20,
  };
  const once = onceEach(NAME);
  blockOptions(d, NAME, {
    listen(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const addr = parseListenAddress(opt.args[0].text);
      if (typeof addr === "string") throw configError(opt.args[0], NAME, addr);
      c.listen = { directive: NAME, at: opt, addr };
    },
    token(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const file = resolve(root, opt.args[0].text);
      let text: string;
      try {
        text = readFileSync(file, "utf8").trim();
      } catch (err) {
        throw configError(opt.args[0], NAME, `cannot read ${file}: ${(err as Error).message}`);
      }
      if (text.length < 16)
        throw configError(opt.args[0], NAME, `${file}: a token needs 16 characters or more`);
      c.token = text;
    },
    kubeconfig(opt) {
      once(opt);
      argCount(opt, NAME, 1, 2);
      c.api.kubeconfig = resolve(root, opt.args[0].text);
      c.api.context = opt.args[1]?.text;
    },
    endpoint(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      if (!/^https?:\/\//.test(opt.args[0].text)) {
        throw configError(opt.args[0], NAME, `endpoint '${opt.args[0].text}' is not an http(s) URL`);
      }
      c.api.endpoint = opt.args[0].text;
    },
    cluster_domain(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.zone = canonical(opt.args[0].text);
      if (typeof nameToWire(c.zone) === "string")
        throw configError(opt.args[0], NAME, `'${c.zone}' is not a name`);
    },
    workloads(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.workloads = parseIntArg(opt.args[0], NAME, 10, 100_000) + 4;
    },
    top(opt) {
      once(opt);
      argCount(opt, NAME, 1, 1);
      c.top = parseIntArg(opt.args[0], NAME, 1, 1000);
    },
  });
  if (c.token === undefined && !isLoopback(c.listen.addr.host)) {
    throw configError(
      c.listen.at,
      NAME,
      `listening on ${c.listen.addr.text} needs 'token FILE': the page shows the names pods ask for`,
    );
  }
  return c;
}

/** What a block's insights keep running: kept across a reload that keeps the directive with the same
 * counting settings (src/server/handover.ts), so the counters and windows go on. */
interface Live {
  insights: Insights;
  start(): void;
  stop(): Promise<void>;
}

/** The main thread's: the pod watch, the timers, the Prometheus series and the workers' deltas. */
function mainLive(insights: Insights, c: Config, log: Logger): Live {
  const pods = watchPods(insights.workloads, c.api, log);
  let link: ThreadLink | undefined;
  return {
    insights,
    start() {
      insights.start();
      track(insights);
      pods.start();
      link = gather(insights, c.listen.addr.text);
    },
    async stop() {
      insights.stop();
      track(insights, false);
      link?.close();
      await pods.stop();
    },
  };
}

/** A worker's (-workers N): it counts, and posts what it counted to the main thread (threads.ts). */
function workerLive(insights: Insights, c: Config): Live {
  let link: ThreadLink | undefined;
  return {
    insights,
    start() {
      insights.start();
      link = feed(insights, c.listen.addr.text);
    },
    stop() {
      insights.stop();
      link?.close();
      return Promise.resolve();
    },
  };
}

export const setup: Setup = (d, ctx) => {
  const c = parse(d, ctx.root);
  const key = `${NAME} ${c.listen.addr.text} ${c.zone} ${c.workloads} ${c.top} ${JSON.stringify(c.api)}`;
  let live = ctx.adopt<Live>(key);
  if (live === undefined) {
    const insights = new Insights({
      zone: nameToWire(c.zone) as Uint8Array,
      workloads: c.workloads,
      top: c.top,
      autopath: false,
      windows: !inWorker(),
    });
    const fresh = inWorker() ? workerLive(insights, c) : mainLive(insights, c, ctx.log(NAME));
    ctx.onStartup(() => fresh.start());
    live = fresh;
  }
  const { insights } = live;
  ctx.keep(key, live, live.stop);
  insights.options.autopath = ctx.block.directives.includes("autopath");
  ctx.onQueryDone(insights.record);
  if (!inWorker()) serveInsights(ctx, c.listen, insights, { token: c.token, top: c.top });
  return undefined;
};
