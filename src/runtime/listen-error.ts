// Why a socket could not be opened, in words a newcomer can act on: the DNS listeners and the HTTP
// listeners of health, ready and prometheus all say it this way, in one line.

/** The reason a listen or bind failed, with what to do about it. */
export function listenErrorText(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "EADDRINUSE":
      return "the address is in use (another process listens there: another clusterdns, a DNS server?)";
    case "EACCES":
      return "permission denied (ports below 1024 need root or the NET_BIND_SERVICE capability; try -dns.port 1053)";
    case "EADDRNOTAVAIL":
      return "this machine has no such address";
    default:
      return (err as Error).message;
  }
}
