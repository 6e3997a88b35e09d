import type { Directive, Token } from "./types.ts";

/** A Corefile that cannot be used. The message always starts with file:line; a mistake in the file says
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
