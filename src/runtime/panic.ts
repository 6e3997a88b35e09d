// What `debug` makes of an exception a plugin did not mean to throw (anything but a PluginError): no
// recovery. CoreDNS's debug turns its server's recover() off, so a Go panic ends the process with its
// stack; here the exception is raised outside every catch, and the process's uncaughtException handler
// (main.ts, worker.ts) ends the process (a worker thread: the thread) with status 2, as Go's panic does.

import type { Logger } from "pino";

/** An exception that reached the server from a block with `debug`. */
export class Panic extends Error {
  constructor(cause: unknown) {
    super(`panic: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "Panic";
  }
}

/** The exit status of a process that ends on a Panic: Go's for an unrecovered panic. */
export const PANIC_EXIT_STATUS = 2;

/** Raises `err` as a Panic on the next tick, past the caller's catch and the promise it is in. */
export function panic(err: unknown): void {
  process.nextTick(() => {
    throw new Panic(err);
  });
}

/** What the process's uncaughtException handler does with a Panic: one fatal line with the stack of
 * what was thrown, and the exit. */
export function exitOnPanic(err: Panic, log: Logger): never {
  log.fatal({ err: err.cause }, "a plugin threw with debug on: not recovered, exiting");
  process.exit(PANIC_EXIT_STATUS);
}
