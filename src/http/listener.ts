// The small HTTP listeners of health, ready and prometheus. Directives naming the same address share
// one server (ref-counted), each adding its path; the last one released closes it.

import { http } from "./node-http.ts";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { isIP } from "node:net";
import type { Directive, Token } from "../corefile/types.ts";
import { configError, startError } from "../corefile/errors.ts";
import { argCount } from "../corefile/args.ts";
import type { SetupContext } from "../setup/context.ts";
import { listenErrorText } from "../runtime/listen-error.ts";
import { inWorker } from "../runtime/thread-role.ts";

export interface ListenAddress {
  /** Undefined for ":8080": every address (dual-stack where the host has IPv6). */
  host: string | undefined;
  port: number;
  /** As written: the registry key and what messages show. */
  text: string;
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export interface Lease {
  /** Removes this route; the server closes when no lease is left. */
  release(): Promise<void>;
  /** A route acquired in standby answers from now on. */
  activate(): void;
}

interface Shared {
  server: Server;
  /** Path -> routes, the one that answers last: the newest, but for one acquired in standby, which
   * goes behind the others until it is activated (a reload's new instance, once it serves). */
  routes: Map<string, Route[]>;
  refs: number;
  listening: Promise<void>;
}

const listeners = new Map<string, Shared>();

/** CoreDNS's health, ready and metrics servers read, write and idle for 5 s at most; Node's defaults
 * (a minute for headers, checked every 30 s) let a client that sends nothing hold a socket for 80 s.
 * Past MAX_CONNECTIONS a new one is closed at once: idle sockets cost the pod memory (about 10 KB
 * each), which thousands of them would take from DNS. Probes and scrapes need a handful. */
const TIMEOUT_MS = 5000;
const MAX_CONNECTIONS = 1000;

function createServer(routes: Map<string, Route[]>): Server {
  const server = http.createServer(
    {
      headersTimeout: TIMEOUT_MS,
      requestTimeout: TIMEOUT_MS,
      keepAliveTimeout: TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    (req, res) => dispatch(routes, req, res),
  );
  // A reader too slow to take its reply (a scrape) is let go too, as by CoreDNS's write timeout.
  server.setTimeout(2 * TIMEOUT_MS, (socket) => socket.destroy());
  server.maxConnections = MAX_CONNECTIONS;
  return server;
}

/** "HOST:PORT", "[IPv6]:PORT" or ":PORT"; port 0 lets the system pick one (see boundPort). */
export function parseListenAddress(text: string): ListenAddress | string {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  if (!m) return `invalid address '${text}' (want HOST:PORT or :PORT)`;
  const port = Number(m[3]);
  if (port > 65535) return `port ${port} is out of range in '${text}'`;
  const host = m[1] ?? m[2];
  if (m[1] !== undefined && isIP(m[1]) !== 6) return `'${m[1]}' is not an IPv6 address in '${text}'`;
  if (host !== "" && isIP(host) === 0 && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(host)) {
    return `invalid host '${host}' in '${text}'`;
  }
  return { host: host || undefined, port, text };
}

/** Where a `DIRECTIVE [ADDRESS]` line (health, ready, prometheus) listens, with what to name in its
 * errors. */
export interface ListenArgument {
  readonly directive: string;
  readonly at: Directive | Token;
  readonly addr: ListenAddress;
}

/** The address the directive `d` names in its one optional argument, else `fallback`; a bad one is a
 * ConfigError at the argument. */
export function listenArgument(d: Directive, fallback: string): ListenArgument {
  argCount(d, d.name, 0, 1);
  const at = d.args[0] ?? d;
  const addr = parseListenAddress(d.args[0]?.text ?? fallback);
  if (typeof addr === "string") throw configError(at, d.name, addr);
  return { directive: d.name, at, addr };
}

export interface ServeOptions {
  /** Under -reuseport, hold the port alone instead of sharing it: a process that finds it taken starts
   * anyway and opens it once the holder lets go (checked every second). prometheus: a scrape then
   * reads one process's counters, never those of whichever process the kernel picked. */
  alone?: boolean;
}

/** Serves `route` at `path` on the address `listen` names from the instance's start to its
 * shutdown. An address that cannot be opened stops the start with one line: file:line, directive,
 * why; with `alone`, one another process holds is waited for instead. */
export function serveWhileRunning(
  ctx: SetupContext,
  listen: ListenArgument,
  path: string,
  route: Route,
  o: ServeOptions = {},
): void {
  ctx.instance.httpListens.add(listen);
  // One listener per process: a worker thread (-workers N) leaves it to the main thread.
  if (inWorker()) return;
  const { at, directive, addr } = listen;
  const shared = ctx.instance.reusePort ?? false;
  const wait = o.alone === true && shared;
  let lease: Lease | undefined;
  let stopped = false;
  // A reload's new instance answers once it serves: until then its /ready would speak for a
  // configuration that is still syncing, while the running one answers DNS.
  let serving = !ctx.instance.takesOver;
  ctx.onServing(() => {
    serving = true;
    lease?.activate();
  });
  let timer: NodeJS.Timeout | undefined;
  const retry = () => {
    timer = setTimeout(() => {
      acquire(addr, path, route, { standby: !serving }).then(
        async (l) => {
          if (stopped) return l.release();
          lease = l;
          ctx.log(directive).info({ address: addr.text }, "listening on the port it waited for");
        },
        () => !stopped && retry(),
      );
    }, 1000);
    timer.unref();
  };
  ctx.onStartup(async () => {
    try {
      lease = await acquire(addr, path, route, { reusePort: shared && !wait, standby: !serving });
    } catch (err) {
      if (wait && (err as NodeJS.ErrnoException).code === "EADDRINUSE") {
        ctx
          .log(directive)
          .info({ address: addr.text }, "another process holds the port: taking it once it lets go");
        retry();
        return;
      }
      throw startError(
        at,
        directive,
        `cannot listen on ${addr.text}: ${listenErrorText(err, addr.port, `or give ${directive} a port from 1024 up`)}`,
      );
    }
  });
  ctx.onShutdown(() => {
    stopped = true;
    clearTimeout(timer);
    return lease?.release();
  });
}

export interface AcquireOptions {
  /** Share the port as the DNS ports are (-reuseport), so that a clusterdns that takes over from
   * another on the same node (node-local, hostNetwork) can start beside it. */
  reusePort?: boolean;
  /** The route answers only when no other route of its path is left, or once activated. */
  standby?: boolean;
}

/** Serves `route` at `path` on `addr`, opening the listener if this is its first user. Rejects with
 * the listen error (EADDRINUSE, ...) when the address cannot be opened. */
export async function acquire(
  addr: ListenAddress,
  path: string,
  route: Route,
  o: AcquireOptions = {},
): Promise<Lease> {
  const reusePort = o.reusePort ?? false;
  let shared = listeners.get(addr.text);
  if (!shared) {
    const routes = new Map<string, Route[]>();
    const server = createServer(routes);
    const listening = new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: addr.host, port: addr.port, reusePort }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    shared = { server, routes, refs: 0, listening };
    listeners.set(addr.text, shared);
    listening.catch(() => {
      if (listeners.get(addr.text) === shared) listeners.delete(addr.text);
    });
  }
  const s = shared;
  s.refs++;
  const list = s.routes.get(path) ?? [];
  if (o.standby === true) list.unshift(route);
  else list.push(route);
  s.routes.set(path, list);
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    const l = s.routes.get(path)!;
    l.splice(l.indexOf(route), 1);
    if (l.length === 0) s.routes.delete(path);
    if (--s.refs > 0) return;
    if (listeners.get(addr.text) === s) listeners.delete(addr.text);
    if (!s.server.listening) return;
    await new Promise<void>((resolve) => {
      s.server.close(() => resolve());
      s.server.closeAllConnections();
    });
  };
  const activate = (): void => {
    const l = s.routes.get(path);
    if (released || l === undefined) return;
    l.splice(l.indexOf(route), 1);
    l.push(route);
  };
  try {
    await s.listening;
  } catch (err) {
    await release();
    throw err;
  }
  return { release, activate };
}

/** The port the listener for `text` is bound to (useful with port 0), or undefined if it is not open. */
export function boundPort(text: string): number | undefined {
  const a = listeners.get(text)?.server.address();
  return a && typeof a === "object" ? a.port : undefined;
}

function dispatch(routes: Map<string, Route[]>, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const list = routes.get(q >= 0 ? url.slice(0, q) : url);
  if (!list) {
    reply(res, 404, "404 page not found\n");
    return;
  }
  list[list.length - 1](req, res);
}

/** A plain-text reply. */
export function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}
