// Whether the process is working through a backlog of Kubernetes watch events (a watch storm: a
// rollout's or a failing node's thousands of EndpointSlice changes a second). Each kubernetes source's
// apply queue reports when its backlog begins and when it is applied; the process has one while any
// source has one. What follows it: the heap's growth limit (heap.ts) and, with worker threads, the
// main thread's UDP sockets, which step aside while it applies (server/step-aside.ts), and the pace
// the apply queues keep meanwhile (restMs).

type Listener = (busy: boolean) => void;

let sources = 0;
const listeners = new Set<Listener>();

export const watchBacklog = {
  /** A source's backlog began (true) or was applied (false): each source reports both, once. */
  report(busy: boolean): void {
    const before = sources > 0;
    sources = Math.max(0, sources + (busy ? 1 : -1));
    if (sources > 0 !== before) for (const fn of listeners) fn(sources > 0);
  },

  get busy(): boolean {
    return sources > 0;
  },

  /** How long the apply queues rest between two slices of a backlog, ms (0: the next turn of the
   * loop). While the main thread has stepped aside from UDP they rest after each slice: the writer
   * then takes about half a core at most, and the answering threads the rest. With one thread it
   * answers between slices instead, and resting only slowed the storm down. */
  restMs: 0,

  /** Calls `fn` each time the process's backlog begins or ends; returns the unsubscribe. */
  subscribe(fn: Listener): () => void {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};
