// Which thread of the process this is: 0 is the main thread (it alone opens the HTTP listeners, sets
// up the node and watches the Kubernetes API); 1..N-1 are the answering worker threads of -workers N
// (src/server/workers.ts). Read at call time: a worker sets it first thing, before it sets anything up.

export const threadRole = {
  /** 0: the main thread; else this worker's number. */
  index: 0,
  /** Threads that answer DNS (-workers, multisocket), as the main thread chose; set before set-up. */
  count: 1,
};

/** True in an answering worker thread: what is the process's once (listeners other than DNS, the
 * node's set-up, the API watch) is left to the main thread. */
export function inWorker(): boolean {
  return threadRole.index !== 0;
}
