// autopath's counters, per server and process-wide (they keep counting across reloads). Plain numbers
// on the query path; metrics.ts names them at scrape time.

export interface AutopathStats {
  /** Walks that found a candidate: a CNAME to it, or its NODATA (coredns_autopath_success_total). */
  cname: number;
  /** Walks that found nothing: the asked name's NXDOMAIN. */
  nxdomain: number;
  /** Queries whose name existed as asked: no walk needed. */
  plain: number;
  /** Walks abandoned because a candidate's lookup failed: the client walks itself. */
  failed: number;
  /** Queries from an address whose namespace is not certain (unknown, host network, reused). */
  unknownClient: number;
  /** Queries from known pods for a name below one of their search domains, and those of them that
   * ended NXDOMAIN (clusterdns_search_expansions_total). */
  expansions: number;
  expansionsNxdomain: number;
}

export const autopathServers = new Map<string, AutopathStats>();

export function autopathStats(server: string): AutopathStats {
  let s = autopathServers.get(server);
  if (s === undefined) {
    s = {
      cname: 0,
      nxdomain: 0,
      plain: 0,
      failed: 0,
      unknownClient: 0,
      expansions: 0,
      expansionsNxdomain: 0,
    };
    autopathServers.set(server, s);
  }
  return s;
}
