// An address and port as one text, "host:port", with an IPv6 host in brackets ("[::1]:53"), as Go's
// net package and dig write it: what log lines and labels show of a server or an upstream.

export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
