// When each name was last invalidated, so that a reply computed before a change of its name is not
// stored after it (AnswerStore's generation checks). Names are kept by the hash of their key's name
// octets, in a fixed table of generations: a slot holds the newest change of every name that hashes
// to it, so a name's recorded change is never older than its real one. Sharing a slot can only make a
// reply look older than a change it did not see, and be refused; a stale one is never stored. Nothing
// is allocated or forgotten per change. (It was a Map of names with a FIFO of their changes, bounded
// by forgetting the oldest: under a watch storm's thousands of changes a second the Map's rehashes
// held the answering thread for 5-20 ms at a time, the longest stalls of an event's apply.)

/** Slots of the table: 2^16, 512 KiB. A storm touching every slot each second costs only replies that
 * were computed across a change of a name sharing their slot (forwarded ones), which are then not
 * stored. */
export const CHANGE_SLOTS = 1 << 16;

export class ChangedNames {
  readonly #at: Float64Array;
  readonly #mask: number;

  constructor(slots = CHANGE_SLOTS) {
    if (slots < 1 || (slots & (slots - 1)) !== 0)
      throw new Error(`change slots: ${slots} is not a power of 2`);
    this.#at = new Float64Array(slots);
    this.#mask = slots - 1;
  }

  /** The generation of the last change of a name whose octets hash to `hash` (0 for none seen), or a
   * later one. */
  lastChange(hash: number): number {
    return this.#at[hash & this.#mask];
  }

  /** Generations only grow, so the newest change is the one recorded. */
  changed(hash: number, generation: number): void {
    this.#at[hash & this.#mask] = generation;
  }

  clear(): void {
    this.#at.fill(0);
  }
}
