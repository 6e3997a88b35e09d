// What names a response-rate account: its client network, its kind of response, and the part of the
// question's name the kind goes by, hashed to 64 bits (two 32-bit hashes) for the shared table
// (accounts.ts). Hashed where it lies, in the network's key and the answer-cache key, so that no
// string is made per reply. The answer-cache key starts with the question's name in wire form,
// lowercased (one character per octet), and ends with five characters of type, class and EDNS state.

/** Two FNV-1a hashes over the same characters, each with a prime and a start of its own. */
export class KeyHash {
  a = 0;
  b = 0;

  /** Starts from the network's key (prefix.ts) and the kind of response (a small number). */
  start(network: string, kind: number): void {
    this.a = 0x811c9dc5 ^ kind;
    this.b = 0x2545f491 ^ kind;
    this.add(network, 0, network.length);
  }

  /** Adds the characters text[from, to). */
  add(text: string, from: number, to: number): void {
    let a = this.a;
    let b = this.b;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
    }
    this.a = a;
    this.b = b;
  }

  /** Mixes the last characters into every bit (murmur3's finalizer): the table's home slot is taken
   * from `a` modulo its size. */
  finish(): void {
    this.a = mix(this.a);
    this.b = mix(this.b);
  }
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Where the question's name ends in the answer-cache key (at its root label). */
export function nameEnd(key: string): number {
  let p = 0;
  for (let l = key.charCodeAt(0); l !== 0 && p < key.length; l = key.charCodeAt(p)) p += l + 1;
  return Math.min(p, key.length);
}

/** Where the name's last `labels` labels start in the answer-cache key: 0 when it has no more than
 * that many; `end` (nothing) for 0 labels. */
export function suffixStart(key: string, labels: number, end: number): number {
  if (labels === 0) return end;
  let count = 0;
  for (let p = 0; p < end; p += key.charCodeAt(p) + 1) count++;
  let p = 0;
  for (let skip = count - labels; skip > 0; skip--) p += key.charCodeAt(p) + 1;
  return p;
}
