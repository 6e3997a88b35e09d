// Samples a running clusterdns every interval while a soak part loads it: RSS (/proc), and from its
// /metrics the answer cache's entries and V8's heap in use.

import { rssMb } from "./part.ts";
import { sample } from "../helpers/metrics.ts";

export interface Sample {
  /** ms since the sampler started. */
  at: number;
  rss: number;
  heapMb: number;
  cacheEntries: number;
}

export class Sampler {
  readonly samples: Sample[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #started = performance.now();

  constructor(pid: number, metricsPort: number | undefined, everyMs = 2000) {
    const take = async () => {
      const s: Sample = {
        at: performance.now() - this.#started,
        rss: rssMb(pid),
        heapMb: NaN,
        cacheEntries: NaN,
      };
      if (metricsPort !== undefined) {
        try {
          const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
          s.heapMb = (sample(text, "nodejs_heap_size_used_bytes") ?? NaN) / 2 ** 20;
          s.cacheEntries = sample(text, "clusterdns_answer_cache_entries") ?? NaN;
        } catch {
          // the server is gone: the part reports that
        }
      }
      this.samples.push(s);
    };
    void take();
    this.#timer = setInterval(() => void take(), everyMs);
  }

  stop(): Sample[] {
    clearInterval(this.#timer);
    return this.samples;
  }
}
