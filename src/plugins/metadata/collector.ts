// The block's metadata collector: the providers in setup order, and each label a reader asks for
// found once, among them, the first time a query reads it after set-up.

import { isSubdomain } from "../../dns/name.ts";
import type { MetaLabel, MetaQuery, MetadataCollector, MetadataProvider } from "./labels.ts";

const NO_LABEL: MetaLabel = { value: () => undefined, perClient: false };

export class Collector implements MetadataCollector {
  readonly #zones: readonly string[];
  readonly #providers: MetadataProvider[] = [];
  /** Set once every plugin of the instance is set up: from then on a label found stays found. */
  #sealed = false;

  /** `zones`: metadata is collected for names in these (canonical) only. */
  constructor(zones: readonly string[]) {
    this.#zones = zones;
  }

  provide(p: MetadataProvider): void {
    this.#providers.push(p);
  }

  seal(): void {
    this.#sealed = true;
  }

  label(name: string): MetaLabel {
    let found: MetaLabel | undefined;
    const resolve = (): MetaLabel => {
      if (found !== undefined) return found;
      let l: MetaLabel | undefined;
      for (const p of this.#providers) if ((l = p.label(name)) !== undefined) break;
      if (this.#sealed) found = l ?? NO_LABEL;
      return l ?? NO_LABEL;
    };
    return {
      value: (q: MetaQuery) => (this.#covers(q.qname) ? resolve().value(q) : undefined),
      get perClient() {
        return resolve().perClient;
      },
    };
  }

  #covers(qname: string): boolean {
    const zones = this.#zones;
    for (let i = 0; i < zones.length; i++) if (isSubdomain(qname, zones[i])) return true;
    return false;
  }
}
