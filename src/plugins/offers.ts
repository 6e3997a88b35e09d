// What the plugins of one server block offer each other (SetupContext.block.shared), by typed key,
// after CoreDNS, where a plugin finds another's handler and asserts the small interface it needs
// (k8s_external's Externaler, autopath's AutoPather). A plugin exports the key of what it offers
// with that interface as the key's type; a reader gets that interface from the key, no cast of its
// own. Plugins set up in chain order, so a reader set up before the offer looks at start-up.

/** The key of an offer of type T. */
export class OfferKey<T> {
  readonly name: string;
  /** Only for the type: an OfferKey<A> is not an OfferKey<B>. */
  declare readonly type?: T;

  constructor(name: string) {
    this.name = name;
  }
}

/** Offers `value` under `key` to the block's other plugins. */
export function offer<T>(shared: Map<string, unknown>, key: OfferKey<T>, value: T): void {
  shared.set(key.name, value);
}

/** What the block offers under `key`, or undefined. */
export function offered<T>(shared: ReadonlyMap<string, unknown>, key: OfferKey<T>): T | undefined {
  // The one cast: values go in only through offer(), typed by the same key.
  return shared.get(key.name) as T | undefined;
}
