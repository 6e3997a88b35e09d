// Holds queries until the store's first sync, up to the startup deadline (`startup_timeout` after the
// source started), as CoreDNS holds its server back until then. Shared by the kubernetes handler and
// k8s_external, which read the same store.

/** What the gate reads of the store (../store/store.ts's Store), declared here so that the store can
 * sit above this room: the gate only waits for its first sync. */
export interface SyncedStore {
  /** True once the first list of every kind waited for is done. */
  readonly synced: boolean;
  whenSynced(): Promise<void>;
}

export interface StartupGateOptions {
  store: SyncedStore;
  /** How long after the source started queries wait for the first sync (startup_timeout). */
  timeoutMs: number;
  /** Date.now() when the source started, or undefined before. */
  startedAt: () => number | undefined;
  /** Runs when queries held for the first sync reach the deadline (the snapshot restores there). */
  onDeadline?: () => void;
}

export class StartupGate {
  readonly #options: StartupGateOptions;
  #waiting: Promise<void> | undefined;

  constructor(o: StartupGateOptions) {
    this.#options = o;
  }

  /** True once the store has synced: then synced() need not be awaited. */
  get open(): boolean {
    return this.#options.store.synced;
  }

  /** Resolves true once the store has synced, false when the deadline passed first. */
  async synced(): Promise<boolean> {
    const { store } = this.#options;
    if (store.synced) return true;
    await this.#untilSynced();
    return store.synced;
  }

  /** Resolves at the first sync or at the startup deadline, whichever comes first. */
  #untilSynced(): Promise<void> {
    const { store } = this.#options;
    const now = Date.now();
    const remaining = (this.#options.startedAt() ?? now) + this.#options.timeoutMs - now;
    if (store.synced || remaining <= 0) return Promise.resolve();
    this.#waiting ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#options.onDeadline?.();
        this.#waiting = undefined;
        resolve();
      }, remaining);
      timer.unref();
      void store.whenSynced().then(() => {
        clearTimeout(timer);
        this.#waiting = undefined;
        resolve();
      });
    });
    return this.#waiting;
  }
}
