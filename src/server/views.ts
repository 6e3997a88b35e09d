// Which block answers a query on a listener whose blocks have views (src/plugins/view): blocks of one
// zone are chained in Corefile order (Block.otherwise) and the first whose view matches, or that has
// none, answers. Made by the pipeline only once a block with a view joins it.

import type { Logger } from "pino";
import type { Block } from "./block.ts";
import type { Peer } from "./peer.ts";
import type { ZoneMux } from "./mux.ts";
import type { ScannedQuery } from "../dns/scan.ts";
import { ViewInput } from "./view-input.ts";
import { parent } from "../dns/name.ts";

/** A zone the mux matched and the block that answers in it. */
export type Match = { readonly zone: string; readonly value: Block };

export class Views {
  readonly #mux: ZoneMux<Block>;
  readonly #log: Logger;
  readonly #q = new ViewInput();

  constructor(mux: ZoneMux<Block>, log: Logger) {
    this.#mux = mux;
    this.#log = log;
  }

  /** The block that answers the query `s` (of `size` octets) from `peer`, its view put in the key
   * (ScannedQuery.keyView). Undefined: no block at all (REFUSED), or a class over 255, whose octet the
   * view's would overwrite (NOTIMP): the chain says which, and nothing is stored. */
  choose(s: ScannedQuery, size: number, peer: Peer): Match | undefined {
    if (s.qclass > 0xff) return undefined;
    const m = this.#block(s, size, peer);
    if (m !== undefined) s.keyView(m.value.viewKey ?? 0);
    return m;
  }

  /** In the longest zone that holds the name, the first block in Corefile order whose view matches or
   * that has none; when none does, the same in the zones above it (as CoreDNS). */
  #block(s: ScannedQuery, size: number, peer: Peer): Match | undefined {
    const q = this.#q.fill(s, size, peer);
    for (let name = s.qname; ;) {
      const m = this.#mux.match(name);
      if (m === undefined) return undefined;
      for (let b: Block | undefined = m.value; b !== undefined; b = b.otherwise) {
        if (b.view === undefined || this.#matches(b, q))
          return b === m.value ? m : { zone: m.zone, value: b };
      }
      if (m.zone === ".") return undefined;
      name = parent(m.zone);
    }
  }

  /** The block an internal lookup goes to: it has no client to match a view against, so the asking
   * block when it serves the name (it asks for its own clients), else the first block of the name's
   * zone without a view. */
  forLookup(name: string, from: Block | undefined): Match | undefined {
    const m = this.#mux.match(name);
    if (m === undefined) return undefined;
    let open: Block | undefined;
    for (let b: Block | undefined = m.value; b !== undefined; b = b.otherwise) {
      if (b === from) return { zone: m.zone, value: b };
      if (b.view === undefined) open ??= b;
    }
    return open && { zone: m.zone, value: open };
  }

  #matches(b: Block, q: ViewInput): boolean {
    try {
      return b.view!.matches(q);
    } catch (err) {
      this.#log.error({ err, view: b.view!.name, qname: q.qname }, "view expression failed; taken as false");
      return false;
    }
  }
}
