// The warm-start snapshot: the store's slim state written to a file now and then and at shutdown, and
// read back when the API has not answered by the startup deadline, so a restart while the API server
// is down answers the last known cluster instead of SERVFAIL.
//
// The file holds the store's own slim records (not Kubernetes objects): a few fields per object, no
// decoding rules to apply twice. A settings fingerprint guards it: a snapshot written under other
// zones, filters or options would answer differently, so it is refused.

import { readFile, rename, writeFile } from "node:fs/promises";
import type { Logger } from "pino";
import type { Store, StoreDump } from "./store.ts";

/** 2: services keyed "ns/name", as every other object (../model/object-key.ts); a version 1 file is
 * refused. */
const VERSION = 2;

export interface SnapshotFile extends StoreDump {
  version: number;
  /** When it was written (ISO 8601). */
  written: string;
  /** The settings the records were made under (SnapshotSettings, as JSON). */
  settings: string;
}

/** What decides the records of a store: a snapshot is used only under the same. */
export interface SnapshotSettings {
  zones: readonly string[];
  namespaces: readonly string[];
  labels?: string;
  namespaceLabels?: string;
  pods: string;
  endpointPodNames: boolean;
}

export class SnapshotError extends Error {
  constructor(file: string, message: string, cause?: unknown) {
    super(`snapshot ${file}: ${message}`, { cause });
    this.name = "SnapshotError";
  }
}

/** Writes the dump next to `file` and renames it over, so a reader never sees half a file. */
export async function writeSnapshot(
  file: string,
  dump: StoreDump,
  settings: SnapshotSettings,
): Promise<void> {
  const body: SnapshotFile = {
    version: VERSION,
    written: new Date().toISOString(),
    settings: JSON.stringify(settings),
    ...dump,
  };
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(body));
  await rename(tmp, file);
}

/** Reads a snapshot written under `settings`; throws SnapshotError saying why it cannot be used. */
export async function readSnapshot(file: string, settings: SnapshotSettings): Promise<SnapshotFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new SnapshotError(file, (err as Error).message, err);
  }
  let s: SnapshotFile;
  try {
    s = JSON.parse(text) as SnapshotFile;
  } catch (err) {
    throw new SnapshotError(file, `not JSON: ${(err as Error).message}`, err);
  }
  if (s === null || typeof s !== "object" || s.version !== VERSION) {
    throw new SnapshotError(file, `unknown format (want version ${VERSION})`);
  }
  if (s.settings !== JSON.stringify(settings)) {
    throw new SnapshotError(file, `written under other settings (${String(s.settings)})`);
  }
  checkShape(file, s);
  return s;
}

/** Checks the parts the store indexes by: a damaged file is refused whole, never half loaded. */
function checkShape(file: string, s: SnapshotFile): void {
  const pairs = (v: unknown): v is [string, unknown][] =>
    Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === "string");
  const obj = (v: unknown) => v !== null && typeof v === "object";
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  const group = (g: unknown) => {
    const e = g as { service?: unknown; ports?: unknown; endpoints?: unknown };
    return (
      obj(g) &&
      typeof e.service === "string" &&
      Array.isArray(e.ports) &&
      Array.isArray(e.endpoints) &&
      e.endpoints.every(
        (x: { ip?: unknown; name?: unknown }) => typeof x?.ip === "string" && typeof x.name === "string",
      )
    );
  };
  const checks: [keyof StoreDump, (v: unknown) => boolean][] = [
    [
      "services",
      (v) =>
        obj(v) &&
        strings((v as { clusterIPs?: unknown }).clusterIPs) &&
        Array.isArray((v as { ports?: unknown }).ports),
    ],
    ["endpointslices", group],
    ["endpoints", (v) => Array.isArray(v) && v.every(group)],
    ["namespaces", (v) => typeof v === "boolean"],
    [
      "pods",
      (v) =>
        obj(v) && typeof (v as { ns?: unknown }).ns === "string" && strings((v as { ips?: unknown }).ips),
    ],
  ];
  for (const [kind, ok] of checks) {
    const list: unknown = s[kind];
    if (!pairs(list) || !list.every(([, v]) => ok(v))) throw new SnapshotError(file, `damaged ${kind} list`);
  }
}

export interface WarmStartOptions {
  file: string;
  /** How often a changed store is written. */
  intervalMs: number;
  settings: SnapshotSettings;
  store: Store;
  log: Logger;
}

/** Keeps the snapshot file for one store: reads it at start (kept aside until the startup deadline),
 * restores it if the API has not synced by then, and writes the store while it comes from the API. */
export class WarmStart {
  readonly #options: WarmStartOptions;
  #pending?: Promise<SnapshotFile | undefined>;
  #loaded?: SnapshotFile;
  #restored?: string;
  #writtenAt = 0;
  #timer?: NodeJS.Timeout;
  #writing: Promise<void> = Promise.resolve();

  constructor(o: WarmStartOptions) {
    this.#options = o;
  }

  /** Reads the file in the background and starts the periodic writes. */
  start(): void {
    const { file, settings, store, log } = this.#options;
    this.#pending = readSnapshot(file, settings).then(
      (s) => (this.#loaded = s),
      (err: Error) => {
        const missing = (err.cause as { code?: string } | undefined)?.code === "ENOENT";
        log[missing ? "info" : "warn"]({ file, reason: err.message }, "no usable snapshot");
        return undefined;
      },
    );
    // Once the API has synced, a snapshot read at start is no longer needed.
    void store.whenSynced().then(() => {
      if (store.servingFrom === "api") this.#loaded = undefined;
    });
    this.#timer = setInterval(() => void this.write(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** Called at the startup deadline: serves the snapshot if the API has not synced. Synchronous when
   * the file was read by then, so queries held until the deadline get the snapshot's answers. */
  deadline(): void {
    if (this.#options.store.synced) return;
    if (this.#loaded) this.#restore(this.#loaded);
    else void this.#pending?.then((s) => s && !this.#options.store.synced && this.#restore(s));
  }

  #restore(s: SnapshotFile): void {
    const { store, log, file } = this.#options;
    const kinds = store.restore(s);
    this.#loaded = undefined;
    this.#restored = s.written;
    log.warn(
      { file, written: s.written, kinds, services: s.services.length },
      "the API has not synced by the startup deadline: serving the snapshot",
    );
    void store.whenApi().then(() => log.info({ file }, "the API synced: the snapshot is replaced"));
  }

  /** A line for /ready while the snapshot serves: which file, written when. */
  describe(): string | undefined {
    if (this.#restored === undefined || this.#options.store.servingFrom !== "snapshot") return undefined;
    return `serving the snapshot written ${this.#restored} (${this.#options.file}): the API has not been listed yet`;
  }

  /** Writes the store when it comes from the API and changed since the last write. */
  write(): Promise<void> {
    const { store, file, settings, log } = this.#options;
    if (store.servingFrom !== "api" || store.modified <= this.#writtenAt) return this.#writing;
    const at = store.modified;
    this.#writing = this.#writing
      .then(() => writeSnapshot(file, store.dump(), settings))
      .then(
        () => {
          this.#writtenAt = Math.max(this.#writtenAt, at);
        },
        (err: Error) => log.warn({ file, err: err.message }, "cannot write the snapshot"),
      );
    return this.#writing;
  }

  /** Stops the timer and writes a last time. */
  stop(): Promise<void> {
    clearInterval(this.#timer);
    return this.write();
  }
}
