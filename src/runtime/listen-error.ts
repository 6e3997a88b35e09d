// Why a socket could not be opened, in words a newcomer can act on: the DNS listeners and the HTTP
// listeners of health, ready and prometheus all say it this way, in one line.

/** What usually holds these ports when they are taken. */
const HOLDERS: Readonly<Record<number, string>> = {
  53: "systemd-resolved, dnsmasq or another DNS server",
  1053: "another clusterdns (the demo's port)",
  8080: "the health endpoint of another clusterdns or CoreDNS, or a web server",
  8181: "the ready endpoint of another clusterdns or CoreDNS",
  9153: "the metrics of another clusterdns or CoreDNS",
};

/** The reason a listen or bind failed, with what to do about it. `port` is the port asked for; without
 * it, the one the error names (Node's socket errors carry it). `otherPort` says where another port is
 * set, for permission denied: the Corefile line that names the port, or the -dns.port flag when the
 * port is the default. */
export function listenErrorText(err: unknown, port?: number, otherPort = "try -dns.port 1053"): string {
  const e = err as NodeJS.ErrnoException & { port?: number };
  switch (e.code) {
    case "EADDRINUSE": {
      const p = port ?? e.port;
      if (p === undefined || p === 0) return "the address is in use (another process listens there)";
      const holder = HOLDERS[p] ?? "another process";
      return `the address is in use: usually ${holder} holds port ${p} (see which: ss -lntup 'sport = :${p}')`;
    }
    case "EACCES":
      return `permission denied (ports below 1024 need root or the NET_BIND_SERVICE capability; ${otherPort})`;
    case "EADDRNOTAVAIL":
      return "this machine has no such address";
    default:
      return (err as Error).message;
  }
}
