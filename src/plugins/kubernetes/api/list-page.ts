// One LIST page as bytes, its items parsed one at a time. Parsing a whole page at once (500 objects)
// builds every object before the first is applied, so the young generation fills with objects that
// are still alive at the next scavenge: they are copied, promoted, and collected by a full collection
// later (at 100k services that was 3.4 s of collection and 2.7 s of parsing in a 13 s start). Here
// one pass over the bytes finds where each item starts and ends (strings and nesting respected, no
// values built), the envelope without its items is parsed at once, and `item(i)` parses one object
// when the reflector applies it: each object dies young, in the step that made it.
//
// The byte pass checks the structure (brackets balance, strings close); an item's own syntax is
// checked by JSON.parse when it is asked for, and a bad one throws a DECODE error then.

import { KubeError, KubeErrorCode } from "./api.ts";
import type { ListMeta, ListPage } from "./api.ts";
import type { KObject } from "../model/source.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

class BadPage extends Error {}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i])) i++;
  return i;
}

/** The index after the string that opens at `i` (a quote). */
function skipString(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
  }
  throw new BadPage("unterminated string");
}

/** The index after the value that starts at `i`: an object or array to its matching bracket, a
 * string to its closing quote, anything else (number, true, false, null) to the next delimiter. */
function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    const start = i;
    while (i < b.length && !isSpace(b[i]) && b[i] !== COMMA && b[i] !== CLOSE_OBJECT && b[i] !== CLOSE_ARRAY)
      i++;
    if (i === start) throw new BadPage("value expected");
    return i;
  }
  let depth = 0;
  for (; i < b.length; i++) {
    const d = b[i];
    if (d === QUOTE) i = skipString(b, i) - 1;
    else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
    else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
      if (--depth === 0) return i + 1;
    }
  }
  throw new BadPage("unbalanced brackets");
}

/** Where the items array's elements are: start and end offsets, two per item. */
function itemBounds(b: Uint8Array, open: number): { bounds: number[]; end: number } {
  const bounds: number[] = [];
  let i = skipSpace(b, open + 1);
  if (b[i] === CLOSE_ARRAY) return { bounds, end: i + 1 };
  for (;;) {
    const end = skipValue(b, i);
    bounds.push(i, end);
    i = skipSpace(b, end);
    if (b[i] === CLOSE_ARRAY) return { bounds, end: i + 1 };
    if (b[i] !== COMMA) throw new BadPage("',' or ']' expected in items");
    i = skipSpace(b, i + 1);
  }
}

/** Finds the top-level member "items" (an array); undefined when there is none. */
function findItems(b: Uint8Array): { open: number; bounds: number[]; end: number } | undefined {
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_OBJECT) throw new BadPage("not an object");
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE_OBJECT) return undefined;
  for (;;) {
    if (b[i] !== QUOTE) throw new BadPage("member name expected");
    const keyEnd = skipString(b, i);
    // Compared as bytes: "items" has no escapes in any API server's output.
    const isItems =
      keyEnd - i === 7 &&
      b[i + 1] === 0x69 &&
      b[i + 2] === 0x74 &&
      b[i + 3] === 0x65 &&
      b[i + 4] === 0x6d &&
      b[i + 5] === 0x73;
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) throw new BadPage("':' expected");
    i = skipSpace(b, i + 1);
    if (isItems && b[i] === OPEN_ARRAY) return { open: i, ...itemBounds(b, i) };
    i = skipSpace(b, skipValue(b, i));
    if (b[i] === CLOSE_OBJECT) return undefined;
    if (b[i] !== COMMA) throw new BadPage("',' or '}' expected");
    i = skipSpace(b, i + 1);
  }
}

/**
 * Buffers that LIST pages' bytes are gathered in, used again page after page. A page of 500 objects
 * is about a megabyte held outside the heap for as long as the page is applied: a new one per page is
 * given back only when a collection finds it dead, so that pages pile up between full collections.
 */
export class PageBuffers {
  /** Buffers larger than this (a page of an unlimited LIST) are not kept. */
  static readonly KEEP_MAX = 8 * 2 ** 20;

  /** Spares are let go after this long without a buffer given back: a list is over, and a
   * watch's life of hours should not hold its megabytes. */
  static readonly IDLE_MS = 1000;
  readonly #spare: Buffer[] = [];
  #idle: NodeJS.Timeout | undefined;

  /** A buffer of at least `size` bytes (its contents are garbage). A new one has a quarter more
   * room, so that the next page, a little larger, fits it too. */
  take(size: number): Buffer {
    const i = this.#spare.findIndex((b) => b.length >= size);
    if (i >= 0) return this.#spare.splice(i, 1)[0];
    return Buffer.allocUnsafeSlow(Math.max(Math.ceil(size * 1.25), 2 ** 18));
  }

  /** Takes back a buffer no one reads any more. */
  give(b: Buffer): void {
    if (b.length > PageBuffers.KEEP_MAX || this.#spare.length >= 4) return;
    this.#spare.push(b);
    if (this.#idle) this.#idle.refresh();
    else {
      this.#idle = setTimeout(() => {
        this.#spare.length = 0;
        this.#idle = undefined;
      }, PageBuffers.IDLE_MS);
      this.#idle.unref();
    }
  }

  /** Copies a body's chunks into one buffer as they come; the buffer grows by doubling. */
  async gather(chunks: AsyncIterable<Buffer>, expected: number): Promise<{ buffer: Buffer; length: number }> {
    let buffer = this.take(expected);
    let length = 0;
    for await (const chunk of chunks) {
      if (length + chunk.length > buffer.length) {
        const bigger = this.take(2 * (length + chunk.length));
        buffer.copy(bigger, 0, 0, length);
        this.give(buffer);
        buffer = bigger;
      }
      chunk.copy(buffer, length);
      length += chunk.length;
    }
    return { buffer, length };
  }
}

class BytesPage implements ListPage {
  readonly metadata: ListMeta;
  readonly size: number;
  readonly #bytes: Buffer;
  readonly #bounds: number[];
  readonly #what: string;
  readonly #release: () => void;

  constructor(o: { what: string; bytes: Buffer; bounds: number[]; metadata: ListMeta; release: () => void }) {
    this.#what = o.what;
    this.#bytes = o.bytes;
    this.#bounds = o.bounds;
    this.metadata = o.metadata;
    this.size = o.bounds.length >> 1;
    this.#release = o.release;
  }

  release(): void {
    this.#release();
  }

  item(i: number): KObject {
    const text = this.#bytes.toString("utf8", this.#bounds[2 * i], this.#bounds[2 * i + 1]);
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch (err) {
      throw new KubeError(KubeErrorCode.DECODE, `${this.#what}: item ${i} is not JSON`, { cause: err });
    }
    if (obj === null || typeof obj !== "object" || typeof (obj as KObject).metadata !== "object") {
      throw new KubeError(KubeErrorCode.DECODE, `${this.#what}: item ${i} is not an object with metadata`);
    }
    return obj as KObject;
  }
}

/**
 * A LIST answer's bytes as a page: the envelope parsed now, the items when asked for. Throws a DECODE
 * error when the bytes are not a JSON object with an `items` array and a `metadata` object.
 */
export function readListPage(what: string, bytes: Buffer, release: () => void = () => {}): ListPage {
  let found: ReturnType<typeof findItems>;
  try {
    found = findItems(bytes);
  } catch (err) {
    const why = err instanceof BadPage ? err.message : String(err);
    throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not a list (${why})`);
  }
  if (!found) throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not a list`);
  // The envelope with an empty items array: small, and parsed (so checked) whole.
  const envelope = bytes.toString("utf8", 0, found.open) + "[]" + bytes.toString("utf8", found.end);
  let body: { metadata?: unknown };
  try {
    body = JSON.parse(envelope) as { metadata?: unknown };
  } catch (err) {
    throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not JSON`, { cause: err });
  }
  if (body.metadata === null || typeof body.metadata !== "object") {
    throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not a list`);
  }
  return new BytesPage({ what, bytes, bounds: found.bounds, metadata: body.metadata as ListMeta, release });
}

/** A page of objects already parsed (fakes, tests, and whatever else has them in hand). */
export function pageOf(items: readonly KObject[], metadata: ListMeta = {}): ListPage {
  return { metadata, size: items.length, item: (i) => items[i], release: () => {} };
}

/** Every item of a page, parsed. */
export function itemsOf(page: ListPage): KObject[] {
  const out: KObject[] = [];
  for (let i = 0; i < page.size; i++) out.push(page.item(i));
  return out;
}
