// Numbers from the IANA DNS parameters registry (RFC 1035, 3596, 2782, 6891, 8659, 4034, 8945).

export const Type = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  DS: 43,
  RRSIG: 46,
  TKEY: 249,
  TSIG: 250,
  IXFR: 251,
  AXFR: 252,
  MAILB: 253,
  MAILA: 254,
  ANY: 255,
  CAA: 257,
} as const;

export const Class = {
  IN: 1,
  CH: 3,
  NONE: 254,
  ANY: 255,
} as const;

export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  YXDOMAIN: 6,
  YXRRSET: 7,
  NXRRSET: 8,
  NOTAUTH: 9,
  NOTZONE: 10,
  BADVERS: 16, // extended rcode: upper 8 bits live in the OPT record
} as const;

export const Opcode = {
  QUERY: 0,
  IQUERY: 1,
  STATUS: 2,
  NOTIFY: 4,
  UPDATE: 5,
} as const;

/** EDNS option codes (IANA's "DNS EDNS0 Option Codes"). */
export const EdnsOption = {
  NSID: 3, // RFC 5001
  ECS: 8, // RFC 7871, client subnet
  COOKIE: 10, // RFC 7873
  TCP_KEEPALIVE: 11, // RFC 7828
  PADDING: 12, // RFC 7830
  EDE: 15, // RFC 8914, extended DNS errors
} as const;

/** The UDP payload size clusterdns advertises in its OPT record (DNS flag day 2020). */
export const EDNS_UDP_SIZE = 1232;
/** What a client without EDNS may receive over UDP (RFC 1035 4.2.1). */
export const PLAIN_UDP_SIZE = 512;
/** The EDNS option code (RFC 6891 9: 65001-65534 are for local/experimental use) that asks the
 * kubernetes plugin which objects an answer came from: `dig +ednsopt=65430`, `clusterdns resolve`. */
export const EXPLAIN_OPTION = 65430;

/** IANA's mnemonics of the types the code has no use for by name, so that a Corefile may name them
 * (acl's `type HTTPS`) and logs show them. */
const OTHER_TYPES: Record<string, number> = {
  MB: 7,
  MG: 8,
  MR: 9,
  NULL: 10,
  WKS: 11,
  MINFO: 14,
  RP: 17,
  AFSDB: 18,
  LOC: 29,
  NAPTR: 35,
  KX: 36,
  CERT: 37,
  DNAME: 39,
  APL: 42,
  DS: 43,
  SSHFP: 44,
  IPSECKEY: 45,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  DHCID: 49,
  NSEC3: 50,
  NSEC3PARAM: 51,
  TLSA: 52,
  SMIMEA: 53,
  HIP: 55,
  CDS: 59,
  CDNSKEY: 60,
  OPENPGPKEY: 61,
  CSYNC: 62,
  ZONEMD: 63,
  SVCB: 64,
  HTTPS: 65,
  SPF: 99,
  EUI48: 108,
  EUI64: 109,
  TKEY: 249,
  TSIG: 250,
  MAILB: 253,
  MAILA: 254,
  URI: 256,
};
const typeNumbers: Record<string, number> = { ...OTHER_TYPES, ...Type };
const typeNames = new Map<number, string>(Object.entries(typeNumbers).map(([k, v]) => [v, k]));
const rcodeNames = new Map<number, string>(Object.entries(Rcode).map(([k, v]) => [v, k]));
const classNames = new Map<number, string>(Object.entries(Class).map(([k, v]) => [v, k]));

/** "A", "AAAA", ... or RFC 3597's "TYPE65280" for types we have no name for. */
export function typeName(t: number): string {
  return typeNames.get(t) ?? `TYPE${t}`;
}

export function className(c: number): string {
  return classNames.get(c) ?? `CLASS${c}`;
}

export function rcodeName(r: number): string {
  return rcodeNames.get(r) ?? `RCODE${r}`;
}

/** Parses "A", "aaaa", "TYPE65280"; undefined when unknown. */
export function typeFromName(s: string): number | undefined {
  const up = s.toUpperCase();
  const known = Object.hasOwn(typeNumbers, up) ? typeNumbers[up] : undefined;
  if (known !== undefined) return known;
  const m = /^TYPE(\d{1,5})$/.exec(up);
  if (m && Number(m[1]) <= 0xffff) return Number(m[1]);
  return undefined;
}

export function classFromName(s: string): number | undefined {
  const up = s.toUpperCase();
  if (up === "HS") return 4;
  const known = (Class as Record<string, number>)[up];
  if (known !== undefined) return known;
  const m = /^CLASS(\d{1,5})$/.exec(up);
  if (m && Number(m[1]) <= 0xffff) return Number(m[1]);
  return undefined;
}

export function rcodeFromName(s: string): number | undefined {
  return (Rcode as Record<string, number>)[s.toUpperCase()];
}
