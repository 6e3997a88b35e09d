// The clusterdns command: read flags and the Corefile, start the servers, stop cleanly on a signal.

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseFlags, USAGE, FlagError, type Flags } from "./cli-flags.ts";
import { BUDGET_SHARE, cgroupLimit, memoryBudget } from "./server/memory-budget.ts";
import { parseCorefile } from "./corefile/parser.ts";
import type { ConfigWarning } from "./corefile/errors.ts";
import { plugins } from "./plugins/index.ts";
import { NOT_SUPPORTED } from "./plugins/not-supported.ts";
import { DEFAULT_COREFILE } from "./default-corefile.ts";
import { Instance } from "./server/instance.ts";
import { READY_WAIT_MS, Reloader, SourceDigest } from "./server/reloader.ts";
import { chooseUdpEngine, type UdpEngine } from "./server/udp-engine.ts";
import { VERSION } from "./version.ts";
import type { Logger } from "pino";
import { createLogger } from "./log.ts";
import { limitHeapGrowth } from "./runtime/heap.ts";
import { cpuQuota } from "./runtime/cpu-quota.ts";
import { multisocketWorkers } from "./plugins/multisocket/setup.ts";
import { WorkerPool } from "./server/workers.ts";
import { StepAside } from "./server/step-aside.ts";
import { watchBacklog } from "./runtime/watch-backlog.ts";
import { threadMetrics } from "./metrics/registry.ts";
import { threadRole } from "./runtime/thread-role.ts";
import type { ServerBlock } from "./corefile/types.ts";
import { Panic, exitOnPanic } from "./runtime/panic.ts";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** "clusterdns: answering on 127.0.0.1:1053 (udp, tcp); try: dig @127.0.0.1 -p 1053 NAME". */
function welcome(instance: Instance, demo: boolean): string {
  const all = instance.listeners;
  const where = all.map((l) => `${l.address.includes(":") ? `[${l.address}]` : l.address}:${l.port}`);
  const first = all[0];
  const zone = first.zones[0];
  const ask = demo ? "nginx.default.svc.cluster.local" : zone === "." ? ". NS" : `${zone} SOA`;
  return `clusterdns: answering on ${where.join(", ")} (udp, tcp); try: dig @${first.address} -p ${first.port} ${ask}`;
}

/** The Corefile to run: -conf, else ./Corefile, else the built-in demo. */
interface Source {
  text: string;
  file: string;
  root: string;
  /** No Corefile was named or found: the demo, which cannot be reloaded. */
  demo: boolean;
}

/** For the commands that print and end: a reader that stopped early (`| head`, `| true`) makes the
 * next write fail with EPIPE, an 'error' nobody handled and a stack trace. It ends the command quietly
 * instead, as a reader closing early is no failure of the command. (A server's stdout is its log.) */
function quietOnClosedStdout(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(process.exitCode ?? 0);
  });
}

export async function main(argv: string[]): Promise<number> {
  if (["resolve", "migrate", "top"].includes(argv[0])) quietOnClosedStdout();
  if (argv[0] === "resolve") return (await import("./resolver/cli.ts")).resolveMain(argv.slice(1));
  if (argv[0] === "migrate") return (await import("./migrate/cli.ts")).migrateMain(argv.slice(1));
  if (argv[0] === "top") return (await import("./plugins/insights/top.ts")).topMain(argv.slice(1));
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`clusterdns: ${err.message}\n${USAGE}`);
    return 2;
  }
  if (flags.help || flags.version || flags.plugins || flags.validate) quietOnClosedStdout();
  if (flags.help || flags.version || flags.plugins) return printInfo(flags);

  const log = createLogger();
  limitHeapGrowth("serving");
  process.on("uncaughtException", (err) => {
    if (err instanceof Panic) exitOnPanic(err, log);
    log.fatal({ err }, "uncaught exception: still serving");
  });
  process.on("unhandledRejection", (err) => log.fatal({ err }, "unhandled rejection: still serving"));

  if (flags.validate) {
    const options = { plugins, notSupported: NOT_SUPPORTED, defaultPort: flags.dnsPort ?? 53 };
    const { validateMain } = await import("./validate.ts");
    if (flags.confs || existsSync("Corefile")) return validateMain(flags.confs ?? ["Corefile"], options);
    const demo = readSource(flags) as Source;
    const { plainLayout } = await import("./corefile/layout.ts");
    return validateMain(plainLayout(demo.text, demo.file, demo.root), options);
  }
  if ((flags.confs?.length ?? 0) > 1) {
    process.stderr.write("clusterdns: -conf is given more than once: only -validate takes several\n");
    return 2;
  }
  const source = readSource(flags);
  if (typeof source === "string") {
    process.stderr.write(`clusterdns: ${source}\n`);
    return 1;
  }
  if (/^(apiVersion|kind):/m.test(source.text) && (await isConfigMap(source))) {
    process.stderr.write(
      `clusterdns: ${source.file} is a Kubernetes ConfigMap, not a Corefile: a server reads its Corefile key as the pod mounts it (kubectl get cm NAME -o jsonpath='{.data.Corefile}' prints it); -validate -conf ${source.file} checks the ConfigMap as it is\n`,
    );
    return 1;
  }

  // Signals are caught from here on: one that arrives during start-up stops the server once it is up.
  const signals = new Signals(log);
  let udpEngine: UdpEngine;
  try {
    udpEngine = chooseUdpEngine(flags.udpEngine);
  } catch (err) {
    process.stderr.write(`clusterdns: ${(err as Error).message}\n`);
    return 1;
  }
  log.info({ engine: udpEngine.name, fallback: udpEngine.fallback }, "udp engine");

  const instanceOptions = {
    plugins,
    notSupported: NOT_SUPPORTED,
    root: source.root,
    defaultPort: flags.dnsPort ?? 53,
    log,
    reusePort: flags.reusePort,
    udpEngine,
  };
  let instance: Instance;
  let pool: WorkerPool | undefined;
  const sources = new SourceDigest(source.text);
  try {
    const warn = (w: ConfigWarning) => log.warn({ at: `${w.file}:${w.line}` }, w.message);
    const blocks = parseCorefile(source.text, source.file, { warn, imported: sources.imported });
    const workers = workerCount(flags, blocks, log);
    threadRole.count = workers;
    Object.assign(instanceOptions, { shareDnsPort: workers > 1 });
    instance = await Instance.create({ ...instanceOptions, blocks });
    const starting = instance;
    signals.holding = () => starting.holding;
    signals.abandon = (signal) => starting.abandon(new StartAbandoned(signal));
    // Started before the main thread's watch is, so they see its every event (runtime/relay.ts).
    if (workers > 1) pool = startWorkers(workers - 1, { source, flags, udpEngine, log, instance });
    if (pool) watchWorkers(instance, pool);
    await instance.start();
    await pool?.listen(instance.groupPorts, WORKERS_LISTEN_WAIT_MS);
  } catch (err) {
    process.stderr.write(`clusterdns: ${(err as Error).message}\n`);
    await pool?.stop(0);
    return err instanceof StartAbandoned ? 0 : 1;
  }
  startMemoryBudget(flags, log, pool);
  log.info(
    { version: VERSION, corefile: source.file, ports: instance.ports, workers: (pool?.size ?? 0) + 1 },
    "started",
  );
  // The logs are JSON for machines; a person at a terminal, or trying the demo, also gets one line.
  if (process.stderr.isTTY || source.demo) process.stderr.write(`${welcome(instance, source.demo)}\n`);
  // A Corefile from a file can be reloaded: every interval with `reload` when it or an import changed,
  // at once and unconditionally on SIGUSR1.
  const reloader = source.demo
    ? undefined
    : new Reloader(instance, {
        file: source.file,
        text: source.text,
        digest: sources.digest(),
        instance: instanceOptions,
        log,
        // The workers take the new configuration over while the old one's store still feeds theirs.
        beforeRetire: async (next, text) =>
          pool?.reload({ text, fileStamps: next.fileStamps.record() }, next.groupPorts, READY_WAIT_MS),
        onReloaded: (next, text) => {
          warnThreadsChanged(flags, text, (pool?.size ?? 0) + 1, log);
          if (pool) watchWorkers(next, pool);
        },
      });
  if (reloader) process.on("SIGUSR1", () => void reloader.reloadNow());
  const steps = pool && stepAsideInStorms(() => reloader?.current ?? instance, pool, log);
  const current = () => (reloader ? reloader.stop().then(() => reloader.current) : Promise.resolve(instance));
  return signals.stopOnSignal(current, log, { pool, steps });
}

/** How long the start waits for the worker threads to listen before it says "started" anyway. */
const WORKERS_LISTEN_WAIT_MS = 10_000;

/** Threads to answer with: -workers, else the Corefile's multisocket, else 1; "auto": the CPU quota. */
function workerCount(flags: Flags, blocks: ServerBlock[], log: Logger): number {
  const corefile = multisocketWorkers(blocks);
  const asked = flags.workers ?? corefile ?? 1;
  const n = asked === "auto" ? cpuQuota() : asked;
  if (flags.workers !== undefined && corefile !== undefined && corefile !== flags.workers)
    log.warn({ workers: flags.workers, multisocket: corefile }, "-workers is given: multisocket is not used");
  if (asked !== 1) log.info({ workers: n, asked }, "answering threads");
  return n;
}

/** A reload does not start or stop threads: a multisocket that now asks for another count says so. */
function warnThreadsChanged(flags: Flags, text: string, running: number, log: Logger): void {
  if (flags.workers !== undefined) return;
  const asked = multisocketWorkers(parseCorefile(text, "Corefile"));
  const n = asked === "auto" ? cpuQuota() : (asked ?? 1);
  if (n !== running)
    log.warn(
      { running, multisocket: asked ?? 1 },
      "reload: the thread count changes at the next start, not now",
    );
}

function startWorkers(
  threads: number,
  o: { source: Source; flags: Flags; udpEngine: UdpEngine; log: Logger; instance: Instance },
): WorkerPool {
  // Beside this file: worker.ts run from the sources, worker.js from the build.
  const entry = new URL(
    `./worker${import.meta.url.slice(import.meta.url.lastIndexOf("."))}`,
    import.meta.url,
  );
  const pool = new WorkerPool({
    threads,
    entry,
    log: o.log,
    data: {
      text: o.source.text,
      fileStamps: o.instance.fileStamps.record(),
      file: o.source.file,
      root: o.source.root,
      defaultPort: o.flags.dnsPort ?? 53,
      udpEngine: o.udpEngine.name,
    },
  });
  threadMetrics.collect = () => pool.metrics();
  return pool;
}

/** With worker threads, the main thread (the watch's one writer) leaves UDP to them while it applies
 * a backlog of watch events (server/step-aside.ts). */
function stepAsideInStorms(current: () => Instance, pool: WorkerPool, log: Logger): StepAside {
  const steps = new StepAside({ current, workersReady: () => pool.ready, log });
  watchBacklog.subscribe((busy) => steps.backlog(busy));
  return steps;
}

/** The instance is ready only once every worker thread listens. */
function watchWorkers(instance: Instance, pool: WorkerPool): void {
  instance.readyChecks.set("workers", [() => pool.ready]);
}

/** The memory budget: -memory.budget, else BUDGET_SHARE of the cgroup's limit, else none. */
function startMemoryBudget(flags: Flags, log: Logger, pool: WorkerPool | undefined): void {
  const limit = cgroupLimit();
  const budget =
    flags.memoryBudgetMiB !== undefined
      ? flags.memoryBudgetMiB * 1048576
      : limit === undefined
        ? 0
        : Math.floor(limit * BUDGET_SHARE);
  log.info(
    { budgetMiB: Math.round(budget / 1048576), limitMiB: limit && Math.round(limit / 1048576) },
    "memory budget",
  );
  memoryBudget.start(budget, log);
  if (pool) memoryBudget.onShed(() => pool.shed());
}

/** A ConfigMap given as the Corefile (the YAML parser is loaded only for text that may be one). */
async function isConfigMap(source: Source): Promise<boolean> {
  const { configMaps } = await import("./corefile/configmap.ts");
  return configMaps({ name: source.file, text: source.text }).length > 0;
}

/** -help, -version and -plugins: printed, nothing started. */
function printInfo(flags: Flags): number {
  if (flags.help) process.stdout.write(USAGE);
  else if (flags.version) {
    process.stdout.write(
      `clusterdns-${VERSION}\n${process.platform}/${process.arch}, node ${process.version}\n`,
    );
  } else {
    process.stdout.write("Server types:\n  dns\n\nPlugins:\n");
    for (const name of plugins.keys()) process.stdout.write(`  dns.${name}\n`);
  }
  return 0;
}

/** The Corefile the flags name, or the reason it cannot be read. */
function readSource(flags: Flags): Source | string {
  const conf = flags.conf ?? (existsSync("Corefile") ? "Corefile" : undefined);
  if (conf === undefined) {
    return { text: DEFAULT_COREFILE, file: "<built-in demo>", root: packageRoot, demo: true };
  }
  const file = resolve(conf);
  try {
    return { text: readFileSync(file, "utf8"), file, root: dirname(file), demo: false };
  } catch (err) {
    return `cannot read Corefile: ${(err as Error).message}`;
  }
}

/** A signal came while the start waited for the first sync: nothing served yet, so it ends there. */
class StartAbandoned extends Error {
  constructor(signal: string) {
    super(`${signal} while waiting for the first sync: nothing served yet, exiting`);
  }
}

/** How long past the lameduck a worker thread may take to stop before it is terminated. */
const STOP_GRACE_MS = 10_000;

/** SIGTERM and SIGINT, caught from the start: one that comes before the server is up is kept and acted
 * on once it is. The first stops the server (its lameduck and all), a second exits at once: before
 * the server is up too, since that may take until startup_timeout (or longer, beside a peer). SIGHUP,
 * whose default ends the process, is ignored as CoreDNS ignores it: a closed terminal or an exiting
 * parent sends it, outside the operator's control. SIGQUIT and SIGUSR2 as CoreDNS's, below. */
class Signals {
  #early: string | undefined;
  /** The instance is waiting to open its DNS sockets (the first sync): nothing is served yet. */
  holding: () => boolean = () => false;
  /** Ends the start that is holding: it undoes what it set up (nodelocal's interface), then main exits. */
  abandon: (signal: string) => void = () => process.exit(0);
  #onSignal: (signal: string) => void = (signal) => {
    if (this.holding() && this.#early === undefined) {
      // Nothing to drain, and the wait may be long (startup_timeout, or a serving peer's); a second
      // signal exits at once, below.
      this.#early = signal;
      this.abandon(signal);
      return;
    }
    if (this.#early === undefined) {
      this.#early = signal;
      return;
    }
    process.stderr.write(`clusterdns: second signal (${signal}) before the server was up: exiting now\n`);
    process.exit(1);
  };

  constructor(log: Logger) {
    process.on("SIGTERM", () => this.#onSignal("SIGTERM"));
    process.on("SIGINT", () => this.#onSignal("SIGINT"));
    process.on("SIGHUP", () =>
      log.info({ signal: "SIGHUP" }, "ignored, as by CoreDNS: SIGUSR1 reloads, SIGTERM stops"),
    );
    // CoreDNS quits at once on SIGQUIT, with status 0 (Node's default dumps nothing and exits 131).
    process.on("SIGQUIT", () => {
      log.info({ signal: "SIGQUIT" }, "quitting at once, without the lameduck");
      process.exit(0);
    });
    // CoreDNS upgrades its binary in place on SIGUSR2; Node's default would end the process.
    process.on("SIGUSR2", () =>
      log.warn(
        { signal: "SIGUSR2" },
        "ignored: an in-place upgrade, CoreDNS's SIGUSR2, is not supported: roll the pods instead",
      ),
    );
  }

  /** Resolves with the exit code once a signal has stopped the instance `current` gives. */
  stopOnSignal(
    current: () => Promise<Instance>,
    log: Logger,
    { pool, steps }: { pool?: WorkerPool; steps?: StepAside } = {},
  ): Promise<number> {
    return new Promise<number>((done) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          // As CoreDNS: a second Ctrl-C forces the exit (status 2); a second SIGTERM changes nothing,
          // so the lameduck runs its course however often the platform sends it.
          if (signal === "SIGINT") {
            log.warn({ signal }, "second signal: exiting now");
            done(2);
          } else log.info({ signal }, "already stopping: SIGINT or SIGKILL ends it at once");
          return;
        }
        stopping = true;
        log.info({ signal }, "stopping");
        // No socket is opened again on an instance that closes its own.
        steps?.stop();
        current()
          // The worker threads stop beside it, with the same lameduck, and are waited for.
          .then((instance) => Promise.all([instance.stop(), pool?.stop(instance.lameduckMs + STOP_GRACE_MS)]))
          .then(
            () => done(0),
            (err: unknown) => {
              log.error({ err }, "stop failed");
              done(1);
            },
          );
      };
      this.#onSignal = stop;
      if (this.#early !== undefined) stop(this.#early);
    });
  }
}
