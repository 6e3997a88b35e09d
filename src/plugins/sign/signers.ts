// What sign offers the block's file plugin: for each signed file it writes, the function that signs
// it now if it needs it. A `file` line for a signed file that does not exist yet calls it at start-up
// (after every setup, so no file is written by -validate's or `migrate`'s dry run), then reads it.

import { OfferKey, offer, offered } from "../offers.ts";

const SIGNERS = new OfferKey<Map<string, () => void>>("sign");

/** Registers the signer of the signed file at `path` (absolute). */
export function offerSigner(shared: Map<string, unknown>, path: string, signNow: () => void): void {
  let map = offered(shared, SIGNERS);
  if (map === undefined) offer(shared, SIGNERS, (map = new Map()));
  map.set(path, signNow);
}

/** The signer of the signed file at `path`, if the block's sign writes it. */
export function signerOf(shared: ReadonlyMap<string, unknown>, path: string): (() => void) | undefined {
  return offered(shared, SIGNERS)?.get(path);
}
