// A keyed, ordered relay from the main thread to the worker threads (-workers N): under the key of a
// live cluster the main thread posts its shared index once, then the names each change touched and the
// store's sync state (src/plugins/kubernetes/shared-store.ts), or, for a store each thread keeps a copy
// of (multicluster), every list and watch event (relay-source.ts); each worker takes the messages of
// its key in the order they were posted. A worker posts nothing back through it.

/** What a message is posted to: a Worker (main side). */
export interface RelayTarget {
  postMessage(message: unknown): void;
}

/** The envelope on the wire between threads: a key's messages in the order they were posted. */
export interface RelayMessage {
  t: "relay";
  key: string;
  ms?: unknown[];
  /** The key's source stopped on the main thread: nothing more comes under it. */
  end?: true;
}

/** The main thread's side: the workers to post to, and for each key what a worker joining late needs
 * first (the state so far, as messages), so a restarted worker starts from what the others hold.
 * What is posted in one turn of the event loop (a LIST page's objects) crosses as one message: a
 * postMessage per object cost the main thread's sync seconds at 10k services. */
export class RelayOut {
  readonly #targets = new Set<RelayTarget>();
  readonly #catchUp = new Map<string, () => unknown[]>();
  /** Posted and not sent yet, in order; consecutive messages of one key share an envelope. */
  #pending: RelayMessage[] = [];

  /** Whether any worker listens: a source posts nothing (no copy made) without one. */
  get active(): boolean {
    return this.#targets.size > 0;
  }

  post(key: string, m: unknown): void {
    if (this.#targets.size === 0) return;
    const last = this.#pending.at(-1);
    if (last !== undefined && last.key === key && last.ms !== undefined) last.ms.push(m);
    else {
      if (this.#pending.length === 0) queueMicrotask(() => this.flush());
      this.#pending.push({ t: "relay", key, ms: [m] });
    }
  }

  /** Sends what is pending (at the end of the turn, or before a worker joins or a key ends). */
  flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    for (const message of pending) for (const t of this.#targets) t.postMessage(message);
  }

  /** `catchUp` gives the messages that bring a new worker to this key's present state. */
  provide(key: string, catchUp: () => unknown[]): void {
    this.#catchUp.set(key, catchUp);
  }

  /** The key's source stopped: a worker drops what it holds for it, unread. */
  withdraw(key: string): void {
    this.#catchUp.delete(key);
    this.flush();
    const message: RelayMessage = { t: "relay", key, end: true };
    for (const t of this.#targets) t.postMessage(message);
  }

  /** Adds a worker: first what every key has so far, then, in order, all that is posted from now. */
  join(target: RelayTarget): void {
    // What is pending is in the state already (the store applied it): the others get it, this one not.
    this.flush();
    for (const [key, catchUp] of this.#catchUp) {
      const ms = catchUp();
      if (ms.length > 0) target.postMessage({ t: "relay", key, ms } satisfies RelayMessage);
    }
    this.#targets.add(target);
  }

  leave(target: RelayTarget): void {
    this.#targets.delete(target);
  }
}

/** A worker's side: messages of a key nobody reads yet are held (the worker's set-up, or a reload's,
 * may not have made its source yet) and handed over, in order, when one subscribes. */
export class RelayIn {
  readonly #readers = new Map<string, (m: unknown) => void>();
  readonly #held = new Map<string, unknown[]>();

  deliver(message: RelayMessage): void {
    const read = this.#readers.get(message.key);
    if (message.end) {
      if (read === undefined) this.#held.delete(message.key);
    } else if (read !== undefined) for (const m of message.ms ?? []) read(m);
    else {
      let held = this.#held.get(message.key);
      if (held === undefined) this.#held.set(message.key, (held = []));
      for (const m of message.ms ?? []) held.push(m);
    }
  }

  subscribe(key: string, read: (m: unknown) => void): void {
    const held = this.#held.get(key) ?? [];
    this.#held.delete(key);
    this.#readers.set(key, read);
    for (const m of held) read(m);
  }

  unsubscribe(key: string): void {
    this.#readers.delete(key);
  }
}

/** The process's relay: `out` is used on the main thread, `in` in a worker. */
export const relay = { out: new RelayOut(), in: new RelayIn() };
