// Zone mux: the server block whose zone is the longest suffix of the query name answers it.

import { isSubdomain, parent } from "../dns/name.ts";

/** Up to this many zones, match() compares suffixes (nothing allocated); past it, it walks the name's
 * parents through the map (a substring per label). */
const SCAN_ZONES = 16;

export class ZoneMux<T> {
  /** Zone -> its entry, made once: match() hands out the same object every time. */
  #zones = new Map<string, { zone: string; value: T }>();
  /** The entries, longest zone first. */
  #byLength: { zone: string; value: T }[] = [];

  add(zone: string, value: T): boolean {
    if (this.#zones.has(zone)) return false;
    const entry = { zone, value };
    this.#zones.set(zone, entry);
    this.#byLength.push(entry);
    this.#byLength.sort((a, b) => b.zone.length - a.zone.length);
    return true;
  }

  /** match() for a query whose name text may not be built yet (ScannedQuery.qname): a mux of the root
   * zone alone needs no name, so none is built. */
  matchQuery(q: { readonly qname: string }): { readonly zone: string; readonly value: T } | undefined {
    const zones = this.#byLength;
    if (zones.length === 1 && zones[0].zone === ".") return zones[0];
    return this.match(q.qname);
  }

  /** What `zone` holds, exactly (no suffix match). */
  get(zone: string): T | undefined {
    return this.#zones.get(zone)?.value;
  }

  /** The entry of the longest zone that contains `qname` (canonical), and that zone. Do not change it. */
  match(qname: string): { readonly zone: string; readonly value: T } | undefined {
    if (this.#byLength.length <= SCAN_ZONES) {
      // Longest first: the first zone that holds the name is the most specific.
      const zones = this.#byLength;
      for (let i = 0; i < zones.length; i++) if (isSubdomain(qname, zones[i].zone)) return zones[i];
      return undefined;
    }
    let name = qname;
    for (;;) {
      const e = this.#zones.get(name);
      if (e !== undefined) return e;
      if (name === ".") return undefined;
      name = parent(name); // an escaped "\." is inside a label, not between two
    }
  }

  get zones(): string[] {
    return [...this.#zones.keys()];
  }
}
