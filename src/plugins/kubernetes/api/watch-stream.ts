// One watch request's life, for http-client.ts: its bytes go to the client's ApplyQueue as they
// arrive and are split into events and parsed there, one event per step, so that a burst of events
// is applied in slices between which queries are answered; its socket is not read while the queue is
// full. Its inactivity timer, and its one end, which calls onDone once: an abort through `ctl`, a
// timeout or a transport error at once (events still queued are dropped; the reflector resumes from
// the last event applied, and the API sends them again), the server's end after the events before it.

import type { ClientRequest, IncomingMessage } from "node:http";
import { KubeError, KubeErrorCode, statusError } from "./api.ts";
import type { KStatus } from "./api.ts";
import type { ApplyQueue, Work } from "./apply-queue.ts";

export function transportError(what: string, err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { message?: string; code?: string };
  const message = e.message ?? String(err);
  const code = e.code && !message.includes(e.code) ? ` (${e.code})` : "";
  return new KubeError(KubeErrorCode.TRANSPORT, `${what}: ${message}${code}`, { cause: err });
}

/** Splits a byte stream into lines on "\n", across chunk boundaries. Works on bytes, so a UTF-8
 * character cut by a chunk boundary is decoded whole. */
export class LineSplitter {
  #pending: Buffer[] = [];

  /** Calls `onLine` for each line `chunk` completes (without its newline) and keeps the rest. */
  push(chunk: Buffer, onLine: (line: string) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const line = this.line(chunk.subarray(start, nl));
      start = nl + 1;
      onLine(line);
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The line that ends with `last` (the bytes kept before it, then `last`). */
  line(last: Buffer): string {
    if (this.#pending.length === 0) return last.toString("utf8");
    this.#pending.push(last);
    const s = Buffer.concat(this.#pending).toString("utf8");
    this.#pending = [];
    return s;
  }

  /** Keeps the start of a line whose end has not come yet. */
  keep(part: Buffer): void {
    this.#pending.push(part);
  }

  /** The unterminated last line ("" when the stream ended on a newline). */
  rest(): string {
    const s = Buffer.concat(this.#pending).toString("utf8");
    this.#pending = [];
    return s;
  }
}

export interface WatchStreamOptions {
  what: string;
  onEvent: (type: string, obj: unknown) => void;
  onDone: (err: KubeError | null) => void;
  inactivityMs: number | undefined;
  queue: ApplyQueue;
}

export class WatchStream {
  readonly ctl = new AbortController();
  readonly #o: WatchStreamOptions;
  readonly #lines = new LineSplitter();
  readonly #onAbort = () => this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#o.what}: aborted`));
  #req: ClientRequest | undefined;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(o: WatchStreamOptions) {
    this.#o = o;
    this.ctl.signal.addEventListener("abort", this.#onAbort);
    this.#arm();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Ends the watch with a transport error. */
  failed(err: unknown): void {
    this.#finish(transportError(this.#o.what, err));
  }

  /** Follows the request the watch was sent with. */
  attach(req: ClientRequest): void {
    this.#req = req;
    req.on("error", (err) => this.failed(err));
    req.on("response", (res) => {
      this.#arm();
      if (res.statusCode !== 200) this.#refused(res);
      else this.#stream(res);
    });
  }

  #finish(err: KubeError | null): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.ctl.signal.removeEventListener("abort", this.#onAbort);
    // After a clean end the connection goes back to the agent; otherwise it is dropped.
    if (err) this.#req?.destroy();
    this.#o.onDone(err);
  }

  /** (Re)starts the inactivity timer. */
  #arm(): void {
    const ms = this.#o.inactivityMs;
    if (ms === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#o.what}: no data for ${ms} ms`)),
      ms,
    );
  }

  /** The events of a watch the server took, one JSON object a line, through the queue. */
  #stream(res: IncomingMessage): void {
    const queue = this.#o.queue;
    let paused = false;
    const resume = () => {
      paused = false;
      if (this.#ended) return;
      // Not read for a while on purpose: the silence is this side's.
      this.#arm();
      res.resume();
    };
    res.on("data", (chunk: Buffer) => {
      this.#arm();
      queue.push(new ChunkWork(this, chunk));
      if (queue.full && !paused) {
        paused = true;
        res.pause();
        queue.whenRoom(resume);
      }
    });
    res.on("end", () =>
      queue.push({
        bytes: 0,
        step: () => {
          this.line(this.#lines.rest());
          this.#finish(null);
          return true;
        },
      }),
    );
    res.on("error", (err) => this.failed(err));
    res.on("close", () => {
      if (!res.complete)
        this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#o.what}: connection closed`));
    });
  }

  /** The splitter of this stream's lines, for its chunks in the queue. */
  get lines(): LineSplitter {
    return this.#lines;
  }

  /** One line of the stream: parsed, and handed to onEvent; the watch ends on a bad one. */
  line(line: string): void {
    if (this.#ended || line.trim() === "") return;
    const what = this.#o.what;
    let ev: { type?: unknown; object?: unknown };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch (err) {
      return this.#finish(new KubeError(KubeErrorCode.DECODE, `${what}: event is not JSON`, { cause: err }));
    }
    if (typeof ev?.type !== "string") {
      return this.#finish(new KubeError(KubeErrorCode.DECODE, `${what}: event has no type`));
    }
    try {
      this.#o.onEvent(ev.type, ev.object);
    } catch (err) {
      return this.#finish(
        new KubeError(KubeErrorCode.DECODE, `${what}: event handler failed: ${(err as Error).message}`, {
          cause: err,
        }),
      );
    }
    if (ev.type === "ERROR") this.#finish(statusError(ev.object as KStatus | undefined));
  }

  /** A watch answered with an HTTP error: reads the Status body and ends with it. */
  #refused(res: IncomingMessage): void {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => {
      this.#arm();
      chunks.push(chunk);
    });
    res.on("end", () => {
      let body: KStatus | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as KStatus;
      } catch {
        body = undefined;
      }
      this.#finish(statusError(body, res.statusCode));
    });
    res.on("error", (err) => this.failed(err));
  }
}

/** One chunk of a watch stream in the queue: each step takes its next line (one event) to the
 * stream; a stream that ended takes nothing more. */
class ChunkWork implements Work {
  readonly bytes: number;
  readonly #stream: WatchStream;
  readonly #chunk: Buffer;
  #at = 0;

  constructor(stream: WatchStream, chunk: Buffer) {
    this.#stream = stream;
    this.#chunk = chunk;
    this.bytes = chunk.length;
  }

  step(): boolean {
    if (this.#stream.ended) return true;
    const chunk = this.#chunk;
    const nl = chunk.indexOf(10, this.#at);
    if (nl === -1) {
      if (this.#at < chunk.length) this.#stream.lines.keep(chunk.subarray(this.#at));
      return true;
    }
    const line = this.#stream.lines.line(chunk.subarray(this.#at, nl));
    this.#at = nl + 1;
    this.#stream.line(line);
    return this.#at >= chunk.length;
  }
}
