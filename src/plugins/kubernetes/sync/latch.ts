// A one-way gate: closed until open() is called, then open for good; wait() resolves once it is open.
// "Synced" is such a gate in the store, each reflector and the API source.

export class Latch {
  #open = false;
  #waiters: (() => void)[] = [];

  get isOpen(): boolean {
    return this.#open;
  }

  open(): void {
    if (this.#open) return;
    this.#open = true;
    for (const w of this.#waiters.splice(0)) w();
  }

  wait(): Promise<void> {
    if (this.#open) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
