// Runs one `on` command: no shell (the words are the program and its arguments), no standard input, each
// line it prints logged with the command, and its end logged when it fails. A failure is never fatal
// to the server, as in CoreDNS, which logs a hook's error and goes on.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Logger } from "pino";

export interface Command {
  /** The event it runs on, as written (lowercased): startup, shutdown, certrenew. */
  event: string;
  program: string;
  args: string[];
  /** Ends with `&`: started and left to run; the next command does not wait for it. */
  background: boolean;
  /** Where the directive is, for the log lines. */
  at: string;
}

/** Starts `c`; resolves once it has exited (or could not start). A background command's promise is
 * not waited for by the callers, but still settles when it ends, so that its failure is logged. */
export function run(c: Command, log: Logger): Promise<void> {
  const fields = { event: c.event, command: [c.program, ...c.args].join(" "), at: c.at };
  log.info({ ...fields, background: c.background }, "running command");
  return new Promise((done) => {
    // A program that cannot start reports an error and may then close too: one line for it.
    let ended = false;
    const resolve = () => {
      ended = true;
      done();
    };
    let child;
    try {
      child = spawn(c.program, c.args, { stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      log.error({ ...fields, err }, "command could not start");
      resolve();
      return;
    }
    const lines = (stream: Readable, name: string) =>
      createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) =>
        log.info({ ...fields, stream: name }, line),
      );
    lines(child.stdout, "stdout");
    lines(child.stderr, "stderr");
    child.once("error", (err) => {
      log.error({ ...fields, err }, "command could not start");
      resolve();
    });
    child.once("close", (code, signal) => {
      if (ended) return;
      if (code === 0) log.info(fields, "command done");
      else
        log.error(
          { ...fields, code, signal },
          `command failed: ${signal ? `killed by ${signal}` : `exit status ${code}`}`,
        );
      resolve();
    });
    // A command left running must not keep the process alive at exit.
    if (c.background) {
      child.unref();
      // Pipes are sockets, which hold the event loop too.
      for (const s of [child.stdout, child.stderr]) (s as unknown as { unref(): void }).unref();
    }
  });
}
