// The time of the store's last change that altered an answer: the zones' SOA serial, in seconds, as
// CoreDNS has it. Two changes within one second share a serial, so a secondary that transferred the
// zone between them (a Service, then its EndpointSlice) would see no newer serial, by NOTIFY or SOA
// refresh, and keep the first state for good. So after a change in the same second as the one before,
// the time is taken again once that second is over: the last state always gets a serial of its own,
// and the serial never runs ahead of the clock. Before the first sync no serial is served: changes
// then only set the time.

export class ChangeClock {
  #at = Date.now();
  #timer: NodeJS.Timeout | undefined;
  readonly #moved: () => void;

  /** `moved`: called when the time is taken again after its second (the serial moved, no record). */
  constructor(moved: () => void) {
    this.#moved = moved;
  }

  /** Date.now() of the last change. */
  get at(): number {
    return this.#at;
  }

  /** A reader store takes its writer's time. */
  set at(at: number) {
    this.#at = at;
  }

  /** A change now; `served`: the serial it replaces may have been served (the store has synced). */
  stamp(served: boolean): void {
    const now = Date.now();
    if (served && Math.floor(now / 1000) === Math.floor(this.#at / 1000) && this.#timer === undefined) {
      this.#timer = setTimeout(
        () => {
          this.#timer = undefined;
          this.#at = Date.now();
          this.#moved();
        },
        1001 - (now % 1000),
      );
      this.#timer.unref();
    }
    this.#at = now;
  }
}
