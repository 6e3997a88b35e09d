import type { Directive, Token } from "./types.ts";

/** A Corefile that cannot be used. The message starts with file:line (file alone when no line is at
 * fault: NoServerBlock); a mistake in the file says
 * "Error during parsing" as CoreDNS does, a directive that could not start (`parsing: false`, a port
 * in use) does not. */
export class ConfigError extends Error {
  readonly code = "CDNS_ERR_CONFIG";
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, message: string, o: { parsing?: boolean } = {}) {
    super(`${file}:${line} - ${o.parsing === false ? "" : "Error during parsing: "}${message}`);
    this.name = "ConfigError";
    this.file = file;
    this.line = line;
  }
}

/** An error at a directive or one of its tokens, naming the directive: `file:line - ...: kubernetes: ...`. */
export function configError(at: Directive | Token, directive: string, message: string): ConfigError {
  return new ConfigError(at.file, at.line, `${directive}: ${message}`);
}

/** A directive, valid as written, that could not start: `file:line - health: cannot listen ...`. */
export function startError(at: Directive | Token, directive: string, message: string): ConfigError {
  return new ConfigError(at.file, at.line, `${directive}: ${message}`, { parsing: false });
}

/** A Corefile that parses to no server block (empty, comments or snippets only): a server on it would
 * open no port and exit at once, so it is refused, by file name as no line is at fault. */
export class NoServerBlock extends ConfigError {
  constructor(file: string) {
    super(file, 1, "");
    this.message = `${file}: the Corefile has no server block: nothing would be served`;
  }
}

/** Several mistakes found at once (every placeholder of a file, say): the message is the first's, so a
 * start-up names one line; -validate and migrate list `all`. */
export class ConfigErrors extends ConfigError {
  readonly all: readonly ConfigError[];
  constructor(all: readonly ConfigError[]) {
    super(all[0].file, all[0].line, "");
    this.message = all[0].message;
    this.all = all;
  }
}

/** Something a Corefile asks for that runs, but not as its writer may think: one line with file:line. */
export interface ConfigWarning {
  file: string;
  line: number;
  message: string;
}
