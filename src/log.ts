// The process logger: pino, JSON lines on stdout. Plugins get a child with `plugin` bound once.

import { pino, type Logger } from "pino";

export function createLogger(level = process.env.CLUSTERDNS_LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
