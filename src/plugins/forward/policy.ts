// The order in which upstreams are tried for one query (CoreDNS's `policy`).

export const POLICIES = ["random", "round_robin", "sequential"] as const;
export type PolicyName = (typeof POLICIES)[number];

/** Returns a function giving, per query, the order to try `list` in. round_robin keeps its own turn. */
export function makePolicy<T>(name: PolicyName, list: readonly T[]): () => readonly T[] {
  switch (name) {
    case "sequential":
      return () => list;
    case "round_robin": {
      let turn = 0;
      return () => {
        const start = turn;
        turn = (turn + 1) % list.length;
        return start === 0 ? list : [...list.slice(start), ...list.slice(0, start)];
      };
    }
    case "random":
      return () => shuffled(list);
  }
}

/** A Fisher-Yates shuffle of a copy. Math.random is enough: the order is load spreading, not a secret. */
export function shuffled<T>(list: readonly T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
