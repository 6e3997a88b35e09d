// The lookup structure behind one hosts directive: names to addresses and, unless no_reverse, reverse
// names to host names. Rebuilt whole on every reload and swapped in, so queries never see half a file.

import type { HostsEntry } from "./hosts-file.ts";
import { isSubdomain, parent, reverseName } from "../../dns/name.ts";

export interface Addresses {
  v4: string[];
  v6: string[];
}

export class HostsTable {
  readonly #names = new Map<string, Addresses>();
  readonly #reverse = new Map<string, string[]>();

  /** `sources` in priority order (the file, then the inline lines); names outside `zones` are left out,
   * as CoreDNS does. */
  constructor(sources: readonly (readonly HostsEntry[])[], zones: readonly string[], reverse: boolean) {
    for (const entries of sources) {
      for (const e of entries) {
        for (const name of e.names) {
          if (!zones.some((z) => isSubdomain(name, z))) continue;
          let a = this.#names.get(name);
          if (!a) this.#names.set(name, (a = { v4: [], v6: [] }));
          const list = e.family === 4 ? a.v4 : a.v6;
          if (!list.includes(e.address)) list.push(e.address);
          // Wildcards stand for many names: no PTR for them.
          if (!reverse || name.startsWith("*.")) continue;
          const rev = reverseName(e.address)!;
          const names = this.#reverse.get(rev);
          if (!names) this.#reverse.set(rev, [name]);
          else if (!names.includes(name)) names.push(name);
        }
      }
    }
  }

  /** Addresses of `name`: its own entry, else a wildcard one label up (`*.example.org.` covers
   * `a.example.org.` but neither `example.org.` nor `b.a.example.org.`). */
  lookup(name: string): Addresses | undefined {
    const own = this.#names.get(name);
    if (own || name === ".") return own;
    return this.#names.get("*." + parent(name));
  }

  /** Host names for a reverse name (`4.3.2.1.in-addr.arpa.`), or undefined. */
  ptr(name: string): readonly string[] | undefined {
    return this.#reverse.get(name);
  }

  /** Number of distinct names: CoreDNS's coredns_hosts_entries. */
  get size(): number {
    return this.#names.size;
  }
}
