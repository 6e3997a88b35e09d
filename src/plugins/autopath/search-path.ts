// What autopath needs from whoever knows the clients: the search list of the client at an address.
// The kubernetes plugin offers one (pod address -> namespace) through the block's `shared` map.

/** The key under which a plugin offers its SearchPathSource in SetupContext.block.shared. */
export const SEARCH_PATH_SOURCES: Record<string, string> = { "@kubernetes": "kubernetes" };

export interface SearchPathSource {
  /** The client's own search domains (canonical, most preferred first), or undefined when who asked
   * is not certain: autopath then answers as if it were not there. */
  searchPath(address: string): readonly string[] | undefined;
  /** Set when the source cannot tell clients apart (kubernetes without `pods verified`): a start-up
   * error, since autopath would otherwise silently do nothing. */
  readonly unusable?: string;
}
