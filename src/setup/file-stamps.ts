// The stamps (inode, size, mtime) of the files a configuration keys long-lived state by: a kubernetes
// store is found again under its kubeconfig's, certificates' and objects files' stamps (liveKey). A
// worker thread sets the same Corefile up later than the main thread, and again when it is started
// after dying; a file changed in between (a mounted Secret updated) gave it another key, under which
// the main thread's store never came, so it never listened. The main thread's instance records what
// it read; a worker's is made with that record and reads it back.

/** Path -> stamp, as an instance's set-up read it. */
export type StampRecord = Readonly<Record<string, string>>;

export class FileStamps {
  readonly #read = new Map<string, string>();
  readonly #given: StampRecord;

  /** `given`: the main thread's record (a worker's instance); the files are read for the others. */
  constructor(given: StampRecord = {}) {
    this.#given = given;
  }

  /** The stamp of `path`: the one given for it, else `read`'s, recorded. */
  of(path: string, read: (path: string) => string): string {
    const stamp = Object.hasOwn(this.#given, path) ? this.#given[path] : read(path);
    this.#read.set(path, stamp);
    return stamp;
  }

  /** What this instance's set-up read: what its worker threads are made with. */
  record(): StampRecord {
    return Object.fromEntries(this.#read);
  }
}
