// The parsed shape of a Corefile. Every piece remembers where it came from, so any setup error can
// name file:line.

export interface Token {
  text: string;
  file: string;
  line: number;
  /** True when the token was written in quotes: `"{"` is a word, not a block. */
  quoted: boolean;
}

/** One line of a server block, or of a directive's nested block: `name args... [{ ... }]`. */
export interface Directive {
  name: string;
  args: Token[];
  /** The lines inside `{ ... }`, when the directive has a block. */
  block?: Directive[];
  file: string;
  line: number;
}

export interface ServerBlock {
  /** The keys before `{`: `cluster.local:53`, `.:1053`, `dns://.`, `10.0.0.0/24`... */
  keys: Token[];
  directives: Directive[];
  file: string;
  line: number;
}

/** How a server block's queries arrive: plain DNS (UDP and TCP), DNS over TLS (RFC 7858) or DNS over
 * HTTPS (RFC 8484), or CoreDNS's DNS over gRPC. */
export type Transport = "dns" | "tls" | "https" | "grpc";

/** A server block key, parsed: one zone served on one port. */
export interface ServerKey {
  scheme: Transport;
  /** Canonical zone: lowercase, absolute. A CIDR key becomes its reverse zone(s). */
  zone: string;
  /** Undefined when a dns:// key names no port: the default (53, or -dns.port) applies. tls:// keys
   * default to 853, https:// and grpc:// ones to 443. */
  port?: number;
  /** The key as written, for messages and metrics labels. */
  text: string;
}
