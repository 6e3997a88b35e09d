// An address and port as one text, "host:port", with an IPv6 host in brackets ("[::1]:53"), as Go's
// net package and dig write it: what log lines and labels show of a server or an upstream.

export function joinHostPort(host: string, port: number): string {
  return `${bracketed(host)}:${port}`;
}

/** An IPv6 address in brackets ("[::1]"), any other host as it is: how a host is written before a port
 * and how CoreDNS's logs print a client. */
export function bracketed(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
