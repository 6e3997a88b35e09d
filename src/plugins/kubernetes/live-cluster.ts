// What a `kubernetes` directive keeps running across reloads (ctx.keep, ctx.adopt): the source, the
// store it fills, the snapshot, and the work around the first sync. A reload whose directive reads the
// same objects into the same kind of store (liveKey) adopts it and answers from it at once: no LIST,
// no watch started again, no window. What only shapes answers (ttl, pods insecure, fallthrough,
// startup_timeout) lives in what each configuration builds over the store (Records, the handler).

import type { Logger } from "pino";
import type { KubernetesConfig } from "./config.ts";
import { snapshotSettings } from "./config.ts";
import type { Kind } from "./model/source.ts";
import { configuredSource, type ConfiguredSource } from "./config-source.ts";
import { Store } from "./store/store.ts";
import { Multicluster } from "./store/multicluster.ts";
import { WarmStart } from "./store/snapshot.ts";
import { observeProgramming } from "./metrics.ts";
import { tuneHeapAroundSync } from "./heap-tuning.ts";
import { fileStampSync } from "../file/file.ts";
import type { FileStamps } from "../../setup/file-stamps.ts";
import { inWorker } from "../../runtime/thread-role.ts";
import { relaySource, relayingSink } from "./relay-source.ts";
import { SharedWriter, sharedReader } from "./shared-store.ts";
import { SharedIndex } from "../../offheap/shared-index.ts";
import type { StoreOptions } from "./store/store-options.ts";
import type { Source } from "./model/source.ts";

/** Where a change of the store goes: an answer cache's invalidation. */
export type CacheDrop = (names: readonly string[] | "all") => void;

/** Everything the source and the store depend on, as one string: where the objects come from (the
 * API and its credentials, by path and content stamp, or the objects files), which kinds and which of
 * them (namespaces, labels), what the store keeps of them, and the snapshot. Two directives with the
 * same key would list and keep the same objects. */
export function liveKey(
  c: KubernetesConfig,
  kinds: readonly Kind[],
  local: readonly string[],
  stamps: FileStamps,
): string {
  // A worker thread keys by the stamps the main thread read: the key its store is posted under.
  const stamp = (path: string) => `${path}@${stamps.of(path, fileStampSync)}`;
  // Without kubeconfig and endpoint, the API is the pod's (in-cluster) or $KUBECONFIG's.
  const kubeconfig =
    c.kubeconfig ?? (c.endpoint === undefined ? process.env.KUBECONFIG?.split(":") : undefined);
  return JSON.stringify({
    zones: c.zones,
    kinds,
    local,
    endpoint: c.endpoint,
    tls: c.tls && [c.tls.cert, c.tls.key, c.tls.ca].map(stamp),
    kubeconfig: kubeconfig === undefined ? undefined : [kubeconfig].flat().map(stamp),
    context: c.context,
    objects: c.objects?.map(stamp),
    namespaces: c.namespaces,
    labels: c.labels,
    namespaceLabels: c.namespaceLabels,
    noEndpoints: c.noEndpoints,
    endpointPodNames: c.endpointPodNames,
    ignoreEmptyService: c.ignoreEmptyService,
    zonal: c.zonal,
    multicluster: c.multicluster,
    snapshot: c.snapshot,
    limits: c.limits,
  });
}

/** What a live cluster is made for. */
interface LiveOptions {
  c: KubernetesConfig;
  kinds: readonly Kind[];
  local: readonly string[];
  log: Logger;
  /** Its liveKey: what the main thread posts to the workers under (-workers N). */
  key: string;
}

/** The store's options for `o`, but for where its changes go. */
function storeOptions(o: LiveOptions, multicluster: Multicluster | undefined): StoreOptions {
  const { c } = o;
  return {
    zones: c.zones,
    waitFor: [...o.kinds],
    endpointPodNames: c.endpointPodNames,
    keepPods: c.pods === "verified",
    namespaceSelector: c.namespaceSelector,
    localIPs: o.local,
    multicluster,
    names: { ignoreEmptyService: c.ignoreEmptyService, zonal: c.zonal },
  };
}

export class LiveCluster {
  readonly store: Store;
  readonly configured: ConfiguredSource;
  readonly multicluster: Multicluster | undefined;
  readonly warm: WarmStart | undefined;
  /** The answer caches serving from the store: the running configuration's, and during a reload the
   * next one's as well. */
  readonly caches: Set<CacheDrop>;
  /** Synced, and the work after the sync done (beforeSettle's, then the heap's compaction). */
  settled = false;
  readonly whenSettled: Promise<void>;
  /** Date.now() when the source started; undefined before. */
  startedAt: number | undefined;
  readonly #c: KubernetesConfig;
  readonly #log: Logger;
  readonly #key: string;
  #relaying: ReturnType<typeof relayingSink> | undefined;
  readonly #beforeSettle = new Set<() => Promise<void>>();
  /** The main thread's side of the shared store (shared-store.ts); undefined in a worker, and for a
   * store whose threads each keep a copy (multicluster). */
  #writer: SharedWriter | undefined;
  #settle: () => void = () => {};

  private constructor(
    o: LiveOptions,
    configured: ConfiguredSource,
    shared?: { writer: SharedWriter; index: SharedIndex } | { reader: Store; caches: Set<CacheDrop> },
  ) {
    const { c } = o;
    this.#c = c;
    this.#key = o.key;
    this.#log = o.log;
    this.multicluster =
      c.multicluster && new Multicluster(c.multicluster, { endpointPodNames: c.endpointPodNames });
    const options = storeOptions(o, this.multicluster);
    if (shared !== undefined && "reader" in shared) {
      this.store = shared.reader;
      this.caches = shared.caches;
    } else {
      this.caches = new Set();
      this.#writer = shared?.writer;
      this.store = new Store({
        ...options,
        tables: shared?.index,
        onChange: (names) => {
          const drop = () => {
            for (const d of this.caches) d(names);
            this.#writer?.changed(names, this.store.modified);
          };
          // Once the change's write section has closed: the answers it drops and the message to the
          // workers wait for nothing a reader holds, and readers need not wait for them.
          if (shared?.index) shared.index.afterWrite(drop);
          else drop();
        },
        onProgrammed: observeProgramming,
      });
    }
    this.configured = configured;
    // A worker's store reads the main thread's: the main thread's writes the snapshot and restores it.
    this.warm = inWorker()
      ? undefined
      : c.snapshot &&
        new WarmStart({ ...c.snapshot, settings: snapshotSettings(c), store: this.store, log: o.log });
    this.whenSettled = new Promise<void>((r) => (this.#settle = r));
  }

  /** A new one for `c`; throws on bad connection settings (configuredSource). */
  static async create(o: LiveOptions & { checkOnly: boolean }): Promise<LiveCluster> {
    // Multi-cluster services keep their own maps (store/multicluster.ts): each thread then holds a
    // copy of the store, filled from the main thread's relayed events, as before the shared index.
    const shareable = o.c.multicluster === undefined;
    if (!inWorker()) {
      const configured = await configuredSource(o.c, o.kinds, o.log, o.checkOnly);
      if (!shareable) return new LiveCluster(o, configured);
      const index = new SharedIndex();
      return new LiveCluster(o, configured, { index, writer: new SharedWriter(index, o.key) });
    }
    if (!shareable) {
      // The relayed state arrives only once started, when the cluster (and its store) exists.
      const cluster: LiveCluster = new LiveCluster(o, {
        source: relaySource(o.key, (d) => cluster.store.restore(d)),
      });
      return cluster;
    }
    // In a worker thread the store is a reader of the main thread's, which its one watch fills.
    const caches = new Set<CacheDrop>();
    const options = storeOptions(o, undefined);
    const reader = await sharedReader(
      o.key,
      (tables) => Store.reader({ ...options, tables }),
      (names) => {
        for (const drop of caches) drop(names);
      },
    );
    const source: Source = {
      start: () => Promise.resolve(),
      stop: () => Promise.resolve(reader.stop()),
      describe: () => "the main thread's store (shared)",
    };
    return new LiveCluster(o, { source }, { reader: reader.store, caches });
  }

  /** Work to do once synced, before the store counts as settled (the DNS sockets open and /ready
   * passes only then); the function that takes it back. */
  beforeSettle(fn: () => Promise<void>): () => void {
    this.#beforeSettle.add(fn);
    return () => this.#beforeSettle.delete(fn);
  }

  async #beforeSettling(): Promise<void> {
    for (const fn of [...this.#beforeSettle]) {
      try {
        await fn();
      } catch (err) {
        this.#log.warn({ err }, "work after the sync failed; serving without it");
      }
    }
  }

  /** Starts the source (once: an adopted one runs already). `takesOver`: see tuneHeapAroundSync. */
  async start(takesOver: boolean): Promise<void> {
    if (this.startedAt !== undefined) return;
    this.startedAt = Date.now();
    const { store, warm } = this;
    const { source } = this.configured;
    if (warm) {
      warm.start();
      setTimeout(() => warm.deadline(), this.#c.startupTimeoutMs).unref();
    }
    tuneHeapAroundSync(
      store,
      takesOver,
      () => this.#beforeSettling(),
      (compactMs) => {
        this.settled = true;
        this.#settle();
        this.#log.info({ source: source.describe(), objects: store.stats().objects, compactMs }, "synced");
      },
    );
    if (inWorker()) await source.start(store);
    else if (this.#writer !== undefined) await source.start(this.#writer.sink(store));
    else {
      const sink = relayingSink(store, this.#key);
      this.#relaying = sink;
      await source.start(sink);
    }
  }

  /** Stops the source and the snapshot's writes (writing it once more). */
  async stop(): Promise<void> {
    await this.configured.source.stop();
    this.#relaying?.close();
    this.#writer?.close();
    await this.warm?.stop();
  }
}
