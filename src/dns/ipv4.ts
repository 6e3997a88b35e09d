// An IPv4 address's bits, read by hand: the store keys and encodes every endpoint by them on every
// watch event, and rrl masks every UDP client's address; node:net has no parser that returns them,
// and a regular expression's match allocated an array and four strings a call.

/** The 32-bit value (unsigned) of a canonical IPv4 address, four decimal octets without leading
 * zeros, or -1 for any other text, which is kept as text so that it reads back as it was. */
export function ipv4Bits(ip: string): number {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === DOT) {
      if (digits === 0 || dots === 3) return -1;
      n = n * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= ZERO && c <= NINE) {
      if (digits > 0 && octet === 0) return -1;
      octet = octet * 10 + (c - ZERO);
      if (octet > 255) return -1;
      digits++;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? n * 256 + octet : -1;
}

const DOT = 46;
const ZERO = 48;
const NINE = 57;
