// The error a plugin throws at query time, with a stable code.

/** An error a plugin throws at query time; `errors` logs it, the server answers SERVFAIL. */
export class PluginError extends Error {
  readonly code: string;
  readonly plugin: string;
  constructor(plugin: string, code: string, message: string, options?: { cause?: unknown }) {
    super(`${plugin}: ${message}`, options);
    this.name = "PluginError";
    this.plugin = plugin;
    this.code = code;
  }
}
