// Text addresses written as octets, for the encoder (A and AAAA rdata): parsed straight into the
// message's buffer, with no string or array made per address.

/** The 16-bit groups of the IPv6 address being parsed. */
const words = new Uint16Array(8);

/** Dotted quad s[from..to) into out[at..at+4); false when it is not one. */
export function ipv4Octets(s: string, from: number, to: number, out: Uint8Array, at: number): boolean {
  let octet = -1;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      if (octet < 0 || dots === 3) return false;
      out[at + dots++] = octet;
      octet = -1;
    } else if (c >= 0x30 && c <= 0x39) {
      octet = octet < 0 ? c - 0x30 : octet * 10 + c - 0x30;
      if (octet > 255) return false;
    } else {
      return false;
    }
  }
  if (dots !== 3 || octet < 0) return false;
  out[at + 3] = octet;
  return true;
}

/** RFC 4291 2.2 text (with "::" and an optional dotted-quad tail) into out[at..at+16); false when it
 * is not one. */
export function ipv6Octets(s: string, out: Uint8Array, at: number): boolean {
  const len = s.length;
  let n = 0; // 16-bit groups parsed
  let gap = -1; // group index where "::" stands
  let i = 0;
  if (len >= 2 && s.charCodeAt(0) === 0x3a) {
    if (s.charCodeAt(1) !== 0x3a) return false;
    gap = 0;
    i = 2;
  }
  while (i < len) {
    let v = 0;
    let j = i;
    for (; j < len && j - i < 5; j++) {
      const h = hexValue(s.charCodeAt(j));
      if (h < 0) break;
      v = (v << 4) | h;
    }
    if (j < len && s.charCodeAt(j) === 0x2e) {
      // Dotted-quad tail: the last 32 bits.
      if (n > 6 || !ipv4Octets(s, i, len, out, at + 12)) return false;
      words[n++] = (out[at + 12] << 8) | out[at + 13];
      words[n++] = (out[at + 14] << 8) | out[at + 15];
      break;
    }
    if (j === i || j - i > 4 || n === 8) return false;
    words[n++] = v;
    i = j;
    if (i === len) break;
    if (s.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (i < len && s.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    } else if (i === len) {
      return false; // a single trailing colon
    }
  }
  if (gap < 0 ? n !== 8 : n > 7) return false;
  let o = at;
  const head = gap < 0 ? n : gap;
  for (let k = 0; k < head; k++) {
    out[o++] = words[k] >> 8;
    out[o++] = words[k];
  }
  for (let k = n; k < 8; k++) {
    out[o++] = 0;
    out[o++] = 0;
  }
  for (let k = head; k < n; k++) {
    out[o++] = words[k] >> 8;
    out[o++] = words[k];
  }
  return true;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}
