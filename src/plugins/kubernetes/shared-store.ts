// One store for every thread (-workers N). The main thread's store keeps its tables in a shared index
// (../../offheap/) and applies the watch's events in write sections; each worker's store reads the
// same tables through a reader of its own. What crosses between the threads is small: the index (once,
// shared, not copied), the names each change touched, for the worker's answer store to drop, and the
// store's sync state.

import type { ArenaHandle } from "../../offheap/arena.ts";
import { IndexReader, type SharedIndex } from "../../offheap/shared-index.ts";
import { relay } from "../../runtime/relay.ts";
import { threadRole } from "../../runtime/thread-role.ts";
import type { Store } from "./store/store.ts";
import type { Sink } from "./model/source.ts";
import type { Tables } from "../../offheap/table.ts";

/** The store's sync state, as a worker's reader store takes it. */
export interface SharedState {
  synced: boolean;
  fromApi: boolean;
  /** Date.now() of the last change that altered an answer (the SOA serial). */
  modified: number;
}

type Message =
  | { op: "index"; handle: ArenaHandle }
  | { op: "changed"; names: readonly string[] | "all"; modified: number }
  | ({ op: "state" } & SharedState);

function stateOf(store: Store): SharedState {
  return { synced: store.synced, fromApi: store.servingFrom === "api", modified: store.modified };
}

/** The main thread's side for the live cluster `key`. */
export class SharedWriter {
  readonly #index: SharedIndex;
  readonly #key: string;
  #store: Store | undefined;
  /** The sync state last posted. */
  #synced = false;
  #fromApi = false;

  constructor(index: SharedIndex, key: string) {
    this.#index = index;
    this.#key = key;
    // A worker that joins (or is started again) first opens the index and takes the state as it is.
    relay.out.provide(key, (): Message[] => [
      { op: "index", handle: index.handle },
      ...(this.#store ? [{ op: "state" as const, ...stateOf(this.#store) }] : []),
    ]);
    this.#post({ op: "index", handle: index.handle });
  }

  /** The sink the source fills `store` through: every call one write section, so a worker never sees
   * half of a change (a service without the slices it came with). */
  sink(store: Store): Sink {
    this.#store = store;
    const index = this.#index;
    // A snapshot restored at start (warm start) syncs the store outside the sink.
    void store.whenSynced().then(() => this.#state());
    return {
      listStart: (kind) => index.write(() => store.listStart(kind)),
      apply: (kind, type, obj) => {
        index.write(() => store.apply(kind, type, obj));
        this.#state();
      },
      listDone: (kind) => {
        index.write(() => store.listDone(kind));
        this.#state();
      },
    };
  }

  /** The store's change of these names (its onChange), for the workers' answer stores. */
  changed(names: readonly string[] | "all", modified: number): void {
    this.#post({ op: "changed", names, modified });
  }

  /** Posts the sync state when it moved (a restored snapshot, a list done). */
  #state(): void {
    const store = this.#store;
    if (store === undefined || !relay.out.active) return;
    const fromApi = store.servingFrom === "api";
    if (store.synced === this.#synced && fromApi === this.#fromApi) return;
    this.#synced = store.synced;
    this.#fromApi = fromApi;
    this.#post({ op: "state", ...stateOf(store) });
  }

  #post(m: Message): void {
    relay.out.post(this.#key, m);
  }

  /** The source stopped: workers drop the key, and the index is no longer the process's. */
  close(): void {
    relay.out.withdraw(this.#key);
    this.#index.retire();
  }
}

/** A worker's side for the live cluster `key`: resolves once the main thread's index arrived, with the
 * reader store `make` builds over it. `changed` gets the names each change touched. */
export function sharedReader(
  key: string,
  make: (tables: Tables) => Store,
  changed: (names: readonly string[] | "all") => void,
): Promise<{ store: Store; stop(): void }> {
  return new Promise((resolve) => {
    let store: Store | undefined;
    const state: SharedState = { synced: false, fromApi: false, modified: 0 };
    relay.in.subscribe(key, (message) => {
      const m = message as Message;
      if (m.op === "index") {
        // One index per live cluster: a second one (not sent) would be a new store.
        if (store !== undefined) return;
        store = make(new IndexReader(m.handle, threadRole.index));
        resolve({ store, stop: () => relay.in.unsubscribe(key) });
        return;
      }
      if (store === undefined) return;
      if (m.op === "state") Object.assign(state, { synced: m.synced, fromApi: m.fromApi });
      state.modified = m.modified;
      store.readerState(state);
      if (m.op === "changed") changed(m.names);
    });
  });
}
