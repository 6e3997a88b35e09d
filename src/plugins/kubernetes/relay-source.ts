// One watch for every thread (-workers N): the main thread's source (the API's reflectors, or objects
// files) fills its store through relayingSink, which posts each call across to the workers first;
// in a worker, relaySource replays them, in the same order, into the worker's own store through the
// same Sink contract. Each store then reports its own changed names to its own answer store.

import { relay } from "../../runtime/relay.ts";
import type { Store, StoreDump } from "./store/store.ts";
import type { EventType, KObject, Kind, Sink, Source } from "./model/source.ts";

/** What crosses between the threads: a Sink call, or the whole state for a worker that joins late. */
type Relayed =
  | { op: "start" | "done"; kind: Kind }
  | { op: "apply"; kind: Kind; type: EventType; obj: KObject }
  | { op: "state"; json: string };

/** The main thread's sink for `store`: every call is posted to the workers under `key`, then applied.
 * A worker that joins later (one restarted after it died) first gets the store's state as it is. */
export function relayingSink(store: Store, key: string): Sink & { close(): void } {
  const post = (m: Relayed) => relay.out.post(key, m);
  const state = (): Relayed => ({ op: "state", json: JSON.stringify(store.dump()) });
  relay.out.provide(key, (): Relayed[] => (store.synced ? [state()] : []));
  // A snapshot the main thread restored (warm start) did not come through the sink: its state goes
  // across once it syncs the store. A worker's store takes only the kinds it has not listed since.
  void store.whenSynced().then(() => {
    if (store.servingFrom === "snapshot" && relay.out.active) post(state());
  });
  return {
    listStart(kind) {
      post({ op: "start", kind });
      store.listStart(kind);
    },
    apply(kind, type, obj) {
      // Posting clones the object at once, so the store may keep or drop it as it likes after.
      if (relay.out.active) post({ op: "apply", kind, type, obj });
      store.apply(kind, type, obj);
    },
    listDone(kind) {
      post({ op: "done", kind });
      store.listDone(kind);
    },
    close: () => relay.out.withdraw(key),
  };
}

/** A worker's source for the live cluster `key`: what the main thread's relayingSink posts. The
 * whole state a late worker gets first goes to `restore` (its store's), not through the Sink. */
export function relaySource(key: string, restore: (d: StoreDump) => void): Source {
  return {
    start(sink) {
      relay.in.subscribe(key, (message) => {
        const m = message as Relayed;
        if (m.op === "apply") sink.apply(m.kind, m.type, m.obj);
        else if (m.op === "start") sink.listStart(m.kind);
        else if (m.op === "done") sink.listDone(m.kind);
        else if (m.op === "state") restore(JSON.parse(m.json) as StoreDump);
      });
      return Promise.resolve();
    },
    stop() {
      relay.in.unsubscribe(key);
      return Promise.resolve();
    },
    describe: () => "the main thread's watch (relayed)",
  };
}
