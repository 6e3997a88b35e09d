import type { Directive, Token } from "./types.ts";

/** A Corefile that cannot be used. The message always starts with file:line. */
export class ConfigError extends Error {
  readonly code = "CDNS_ERR_CONFIG";
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line} - Error during parsing: ${message}`);
    this.name = "ConfigError";
    this.file = file;
    this.line = line;
  }
}

/** An error at a directive or one of its tokens, naming the directive: `file:line - ...: kubernetes: ...`. */
export function configError(at: Directive | Token, directive: string, message: string): ConfigError {
  return new ConfigError(at.file, at.line, `${directive}: ${message}`);
}
