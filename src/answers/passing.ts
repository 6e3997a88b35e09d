// The store's passing replies, oldest first: replies held only for their client's retry (a forwarded
// reply over BIG_REPLY_OCTETS, replayed for a second so that the client's TCP retry after a truncated
// UDP reply is not fetched again), never kept by `cache`. The store lets them go as soon as their time
// is up, not when its sweep's hand comes round (a minute at 120k slots: one client asking unique names
// of 64 KB filled the store's whole budget with replies nobody would ask again), and holds no more of
// them than a share of its octets: past it, the oldest goes. A ring of slots with their serials (a slot
// that took another reply since is skipped) and the octets each took.

export class PassingQueue {
  /** Octets the passing replies may hold at most. */
  readonly maxBytes: number;
  readonly #slot: Int32Array;
  readonly #serial: Int32Array;
  readonly #octets: Int32Array;
  #head = 0;
  count = 0;
  /** Octets of the replies queued (some may have gone already: counted until they leave the queue). */
  bytes = 0;

  constructor(maxBytes: number, capacity = 1024) {
    this.maxBytes = maxBytes;
    this.#slot = new Int32Array(capacity);
    this.#serial = new Int32Array(capacity);
    this.#octets = new Int32Array(capacity);
  }

  get full(): boolean {
    return this.count === this.#slot.length;
  }

  /** The oldest entry's slot and serial (count > 0). */
  get headSlot(): number {
    return this.#slot[this.#head];
  }
  get headSerial(): number {
    return this.#serial[this.#head];
  }

  push(slot: number, serial: number, octets: number): void {
    const i = (this.#head + this.count) % this.#slot.length;
    this.#slot[i] = slot;
    this.#serial[i] = serial;
    this.#octets[i] = octets;
    this.count++;
    this.bytes += octets;
  }

  /** Takes the oldest entry off the queue. */
  shift(): void {
    this.bytes -= this.#octets[this.#head];
    this.#head = (this.#head + 1) % this.#slot.length;
    this.count--;
  }
}
