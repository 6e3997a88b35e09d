// The names the answer store invalidated lately, each with the generation of its last invalidation,
// so that a reply computed before a change of its name is refused (AnswerStore's generation checks).
// Bounded: past `remember` names the oldest are forgotten, and a reply older than the newest forgotten
// change is refused whatever its name. The order is a FIFO of [name, generation] pairs, whose stale
// entries (a name invalidated again since) are skipped: a Map walked from its start to find its oldest
// skips every entry deleted since its last rehash, and that cost 70-120 us a watch event at 10k
// services, the largest single cost of one in a storm.

export class ChangedNames {
  readonly #remember: number;
  readonly #at = new Map<string, number>();
  #order: (string | number)[] = [];
  #head = 0;
  /** Changes up to this generation are forgotten. */
  forgottenUpTo = 0;

  constructor(remember: number) {
    this.#remember = remember;
  }

  /** The generation of the last remembered change of `wire`, 0 for none. */
  lastChange(wire: string): number {
    return this.#at.get(wire) ?? 0;
  }

  changed(wire: string, generation: number): void {
    this.#at.set(wire, generation);
    this.#order.push(wire, generation);
  }

  clear(): void {
    this.#at.clear();
    this.#order = [];
    this.#head = 0;
  }

  /** Forgets the oldest changes past `remember` names (and stale order entries past 4x as many). */
  trim(): void {
    const order = this.#order;
    let head = this.#head;
    while (
      head < order.length &&
      (this.#at.size > this.#remember || order.length - head > 4 * this.#remember)
    ) {
      const wire = order[head] as string;
      const at = order[head + 1] as number;
      head += 2;
      if (this.#at.get(wire) !== at) continue;
      this.#at.delete(wire);
      this.forgottenUpTo = at;
    }
    if (head > 4096 && head * 2 > order.length) {
      this.#order = order.slice(head);
      head = 0;
    }
    this.#head = head;
  }
}
