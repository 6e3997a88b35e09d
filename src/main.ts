// The clusterdns command: read flags and the Corefile, start the servers, stop cleanly on a signal.

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseFlags, USAGE, FlagError } from "./cli-flags.ts";
import { parseCorefile } from "./corefile/parser.ts";
import { plugins } from "./plugins/index.ts";
import { NOT_SUPPORTED } from "./plugins/not-supported.ts";
import { DEFAULT_COREFILE } from "./default-corefile.ts";
import { Instance } from "./server/instance.ts";
import { Reloader } from "./server/reloader.ts";
import { chooseUdpEngine, type UdpEngine } from "./server/udp-engine.ts";
import { VERSION } from "./version.ts";
import { createLogger } from "./log.ts";
import { limitHeapGrowth } from "./runtime/heap.ts";

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

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === "resolve") return (await import("./resolver/cli.ts")).resolveMain(argv.slice(1));
  if (argv[0] === "migrate") return (await import("./migrate/cli.ts")).migrateMain(argv.slice(1));
  let flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    process.stderr.write(`clusterdns: ${err.message}\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (flags.version) {
    process.stdout.write(
      `clusterdns-${VERSION}\n${process.platform}/${process.arch}, node ${process.version}\n`,
    );
    return 0;
  }
  if (flags.plugins) {
    process.stdout.write("Server types:\n  dns\n\nPlugins:\n");
    for (const name of plugins.keys()) process.stdout.write(`  dns.${name}\n`);
    return 0;
  }

  const log = createLogger();
  limitHeapGrowth("serving");
  process.on("uncaughtException", (err) => log.fatal({ err }, "uncaught exception: still serving"));
  process.on("unhandledRejection", (err) => log.fatal({ err }, "unhandled rejection: still serving"));

  let source: { text: string; file: string; root: string };
  const conf = flags.conf ?? (existsSync("Corefile") ? "Corefile" : undefined);
  if (conf !== undefined) {
    const file = resolve(conf);
    try {
      source = { text: readFileSync(file, "utf8"), file, root: dirname(file) };
    } catch (err) {
      process.stderr.write(`clusterdns: cannot read Corefile: ${(err as Error).message}\n`);
      return 1;
    }
  } else {
    source = { text: DEFAULT_COREFILE, file: "<built-in demo>", root: packageRoot };
  }

  if (flags.validate) {
    const options = { plugins, notSupported: NOT_SUPPORTED, defaultPort: flags.dnsPort ?? 53 };
    return (await import("./validate.ts")).validateMain(source, options);
  }

  // Signals are caught from here on: one that arrives during start-up stops the server once it is up.
  let onSignal: (signal: string) => void = (signal) => (early ??= signal);
  let early: string | undefined;
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));

  let udpEngine: UdpEngine;
  try {
    udpEngine = chooseUdpEngine(flags.udpEngine);
  } catch (err) {
    process.stderr.write(`clusterdns: ${(err as Error).message}\n`);
    return 1;
  }
  log.info({ engine: udpEngine.name, fallback: udpEngine.fallback }, "udp engine");

  let instance: Instance;
  const instanceOptions = {
    plugins,
    notSupported: NOT_SUPPORTED,
    root: source.root,
    defaultPort: flags.dnsPort ?? 53,
    log,
    reusePort: flags.reusePort,
    udpEngine,
  };
  try {
    const blocks = parseCorefile(source.text, source.file);
    instance = await Instance.create({ ...instanceOptions, blocks });
    await instance.start();
  } catch (err) {
    process.stderr.write(`clusterdns: ${(err as Error).message}\n`);
    return 1;
  }
  log.info({ version: VERSION, corefile: source.file, ports: instance.ports }, "started");
  // The logs are JSON for machines; a person at a terminal, or trying the demo, also gets one line.
  if (process.stderr.isTTY || conf === undefined)
    process.stderr.write(`${welcome(instance, conf === undefined)}\n`);
  // A Corefile from a file can be reloaded: every interval with `reload`, at once on SIGUSR1.
  const reloader =
    conf === undefined
      ? undefined
      : new Reloader(instance, { file: source.file, text: source.text, instance: instanceOptions, log });
  if (reloader) process.on("SIGUSR1", () => void reloader.check());

  return new Promise<number>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        log.warn({ signal }, "second signal: exiting now");
        done(1);
        return;
      }
      stopping = true;
      log.info({ signal }, "stopping");
      (reloader ? reloader.stop().then(() => reloader.current) : Promise.resolve(instance))
        .then((current) => current.stop())
        .then(
          () => done(0),
          (err: unknown) => {
            log.error({ err }, "stop failed");
            done(1);
          },
        );
    };
    onSignal = stop;
    if (early !== undefined) stop(early);
  });
}
