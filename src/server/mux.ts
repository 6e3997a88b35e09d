// Zone mux: the server block whose zone is the longest suffix of the query name answers it.

import { parent } from "../dns/name.ts";

export class ZoneMux<T> {
  #zones = new Map<string, T>();

  add(zone: string, value: T): boolean {
    if (this.#zones.has(zone)) return false;
    this.#zones.set(zone, value);
    return true;
  }

  /** The entry of the longest zone that contains `qname` (canonical), and that zone. */
  match(qname: string): { zone: string; value: T } | undefined {
    let name = qname;
    for (;;) {
      const v = this.#zones.get(name);
      if (v !== undefined) return { zone: name, value: v };
      if (name === ".") return undefined;
      name = parent(name); // an escaped "\." is inside a label, not between two
    }
  }

  get zones(): string[] {
    return [...this.#zones.keys()];
  }
}
