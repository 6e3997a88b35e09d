// What autopath needs from whoever knows the clients: the search list of the client at an address.
// The kubernetes plugin offers one (pod address -> namespace) to the plugins of its block
// (kubernetes/search-paths.ts), after CoreDNS's AutoPather.

export interface SearchPathSource {
  /** The search domains (canonical, most preferred first) of the client at `address` asking `qname`
   * (a source serving several cluster zones gives the path of the one `qname` is in), or undefined
   * when who asked is not certain: autopath then answers as if it were not there. */
  searchPath(address: string, qname: string): readonly string[] | undefined;
  /** Set when the source cannot tell clients apart (kubernetes without `pods verified`): a start-up
   * error, since autopath would otherwise silently do nothing. */
  readonly unusable?: string;
}
