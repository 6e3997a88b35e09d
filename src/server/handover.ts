// What a reload's new instance takes over from the running one instead of building it again: a plugin
// keeps a live resource (a kubernetes source with its synced store, a parsed zone or hosts file) under
// a key that spells out everything the resource depends on; the next instance's setup adopts the one
// kept under the same key. What was adopted is not stopped when the old instance retires; when the
// take-over fails, it goes back to the old instance, which goes on serving with it.

interface Kept {
  key: string;
  value: unknown;
  stop: () => void | Promise<void>;
  /** Taken by the next instance: its stop is no longer this instance's to run. */
  adopted: boolean;
  /** Came from the previous instance: given back, not stopped, when this instance's take-over fails. */
  borrowed?: Kept;
}

export class Handover {
  readonly #kept: Kept[] = [];
  readonly #from: Handover | undefined;

  /** `from`: the running instance's, when this one is a reload's new instance. */
  constructor(from?: Handover) {
    this.#from = from;
  }

  /** Keeps `value` for the next instance under `key`; `stop` runs when this instance stops and the
   * next one did not adopt it. */
  keep(key: string, value: unknown, stop: () => void | Promise<void>): void {
    this.#kept.push({ key, value, stop, adopted: false });
  }

  /** The value the running instance keeps under `key` (each one adopted once), kept by this instance
   * from now on; undefined when there is none. */
  adopt<T>(key: string): T | undefined {
    const from = this.#from;
    const prev = from && from.#kept.find((k) => k.key === key && !k.adopted);
    if (prev === undefined) return undefined;
    prev.adopted = true;
    this.#kept.push({ key, value: prev.value, stop: prev.stop, adopted: false, borrowed: prev });
    return prev.value as T;
  }

  /** How many resources this instance adopted (for the reload's log line). */
  get adopted(): number {
    return this.#kept.filter((k) => k.borrowed !== undefined).length;
  }

  /** The take-over failed: what was adopted goes back to the running instance, and what this instance
   * built is stopped. */
  async abort(onError: (err: unknown) => void): Promise<void> {
    for (const k of this.#kept) if (k.borrowed) k.borrowed.adopted = false;
    await this.#stop(
      this.#kept.filter((k) => k.borrowed === undefined),
      onError,
    );
    this.#kept.length = 0;
  }

  /** The instance stops: every resource the next instance did not adopt is stopped, newest first. */
  async stop(onError: (err: unknown) => void): Promise<void> {
    await this.#stop(
      this.#kept.filter((k) => !k.adopted),
      onError,
    );
    this.#kept.length = 0;
  }

  async #stop(list: Kept[], onError: (err: unknown) => void): Promise<void> {
    for (const k of list.reverse()) {
      try {
        await k.stop();
      } catch (err) {
        onError(err);
      }
    }
  }
}
