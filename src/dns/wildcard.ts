// The wildcard ("any") address of each family: a socket bound there takes the traffic of every local
// address of that family, so no single address of the host is its own.

export const WILDCARD_ADDRESSES: readonly string[] = ["0.0.0.0", "::"];

export function isWildcardAddress(address: string): boolean {
  return address === "0.0.0.0" || address === "::";
}
