// Values as bytes for off-heap tables: a writer that encodes into one reused scratch buffer, and a
// reader over any byte view (a SharedArrayBuffer's included). Integers are unsigned varints, strings
// UTF-8 with their byte length first: most of what the tables hold is short names and small numbers.

export class ByteWriter {
  #buf = Buffer.allocUnsafe(4096);
  #pos = 0;

  /** Starts a new value (the scratch buffer is reused). */
  reset(): void {
    this.#pos = 0;
  }

  /** The bytes written since reset, valid until the next reset. */
  get bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#pos);
  }

  get length(): number {
    return this.#pos;
  }

  u8(n: number): void {
    this.#room(1);
    this.#buf[this.#pos++] = n;
  }

  /** A non-negative integer below 2^53, 7 bits per byte. */
  uint(n: number): void {
    this.#room(8);
    while (n >= 0x80) {
      this.#buf[this.#pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.#buf[this.#pos++] = n;
  }

  /** A signed 32-bit integer (an IPv4 address key), 4 bytes little-endian. */
  i32(n: number): void {
    this.#room(4);
    this.#buf.writeInt32LE(n | 0, this.#pos);
    this.#pos += 4;
  }

  bool(b: boolean): void {
    this.u8(b ? 1 : 0);
  }

  str(s: string): void {
    const max = s.length * 3;
    this.#room(max + 5);
    // Room for the longest varint of the length first, then the text; shifted back when shorter.
    const start = this.#pos;
    const n = this.#buf.write(s, start + 5, "utf8");
    this.uint(n);
    const at = this.#pos;
    if (at !== start + 5) this.#buf.copyWithin(at, start + 5, start + 5 + n);
    this.#pos = at + n;
  }

  /** An optional string: absent is one byte. */
  optStr(s: string | undefined): void {
    if (s === undefined) this.u8(0);
    else {
      this.u8(1);
      this.str(s);
    }
  }

  strs(list: readonly string[]): void {
    this.uint(list.length);
    for (const s of list) this.str(s);
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }
}

export class ByteReader {
  #buf: Buffer;
  #pos = 0;

  constructor(buf: Buffer = Buffer.alloc(0)) {
    this.#buf = buf;
  }

  /** Reads from `buf` at `pos` (the reader is reused). */
  at(buf: Buffer, pos: number): this {
    this.#buf = buf;
    this.#pos = pos;
    return this;
  }

  get pos(): number {
    return this.#pos;
  }

  u8(): number {
    return this.#buf[this.#pos++];
  }

  /** Throws a RangeError past the end: a value cut short, or torn by a writer, must fail, not spin
   * (a missing byte reads as 0 under `& 0x7f` and never ends the loop). */
  uint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.#buf[this.#pos++];
      if (b === undefined) throw new RangeError("offheap: integer past the end of the value");
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  }

  /** A list's length: every element takes a byte at least, so a length beyond the bytes left is
   * corrupt, and throws a RangeError instead of allocating that many slots. */
  count(): number {
    const n = this.uint();
    if (n > this.#buf.length - this.#pos) throw new RangeError("offheap: list longer than the value");
    return n;
  }

  i32(): number {
    const n = this.#buf.readInt32LE(this.#pos);
    this.#pos += 4;
    return n;
  }

  bool(): boolean {
    return this.u8() !== 0;
  }

  str(): string {
    const n = this.uint();
    const s = this.#buf.toString("utf8", this.#pos, this.#pos + n);
    this.#pos += n;
    return s;
  }

  optStr(): string | undefined {
    return this.u8() === 0 ? undefined : this.str();
  }

  strs(): string[] {
    const n = this.count();
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = this.str();
    return out;
  }
}
