// The answer store's key (src/answers/): the question's name in wire form ASCII-lowercased, its type
// and class octets as they are, and one octet of state (scan.ts builds it: EDNS present, DO, a local
// option, CD, NSID, and SOURCE below). On a listener with views, the class's high octet holds the
// view that answered (VIEW_OCTET): the classes the store keeps (IN, CH, ANY) all have it 0. Hashes
// are FNV-1a over the octets: cheap, and good enough for keys that differ in a label or two.

/** State bit of a key that holds what the plugins after `cache` answered, not what a client got: the
 * cache refills from it without running them again (src/answers/lane.ts). */
export const SOURCE = 0x80;

/** A bit every state octet has ("0", "1", "2" are 0x30-0x32), cleared in the key of an IPv4 client's
 * AAAA question where a block answers AAAA by the client's address family (dns64 without allow_ipv4):
 * the two families' replies are then two entries, and neither is replayed to the other. */
export const IPV4_APART = 0x20;

/** Octets after the name: type, class, state. */
export const KEY_TAIL = 5;

/** Where the view's octet is, counted back from the key's end: the class's high octet. */
export const VIEW_OCTET = 3;

/** The longest key: a name of 255 octets and the tail. */
export const MAX_KEY = 255 + KEY_TAIL;

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 16777619;

export function hashBytes(b: Uint8Array, from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], FNV_PRIME);
  return h;
}

/** The lowercased wire form of a canonical name's text (name.ts's wireKey), as octets. */
export function latin1Bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
