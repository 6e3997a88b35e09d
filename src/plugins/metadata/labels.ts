// Request metadata, after CoreDNS's metadata plugin: labels such as `kubernetes/client-namespace` that
// one plugin of a block publishes and others read (log's `{/LABEL}`, rewrite's edns0 variables, view's
// metadata()). A value is worked out when something reads it, from the question and who asked, so a
// query pays only for the labels read, and a block without `metadata` pays nothing at all. The block's
// `metadata` directive offers the collector; providers register with it, readers look labels up.

import type { Edns } from "../../dns/message.ts";
import { OfferKey, offered } from "../offers.ts";

/** What a value is worked out from: QueryDone, Request and the view's query all have these. */
export interface MetaQuery {
  readonly qname: string;
  readonly qtype: number;
  readonly remoteAddress: string;
  /** The query's OPT record, where the reader has it at hand (view's query, log's finished query),
   * decoded when read; a chain Request has it as `msg.edns`. For labels that read EDNS options
   * (geoip's edns-subnet). */
  readonly edns?: Edns;
  readonly msg?: { readonly edns?: Edns };
}

export interface MetaLabel {
  /** The label's value for a query; undefined when it has none (CoreDNS's nil value function). */
  value(q: MetaQuery): string | undefined;
  /** The value depends on who asked, not only on the question: a reply built from it is the client's
   * own and is never replayed to another. */
  readonly perClient: boolean;
}

/** A plugin that publishes labels: the label of this name, or undefined when it has no such label. */
export interface MetadataProvider {
  label(name: string): MetaLabel | undefined;
}

/** What a block's `metadata` offers its other plugins. */
export interface MetadataCollector {
  /** Publishes a provider's labels (in setup; plugins set up in chain order). */
  provide(p: MetadataProvider): void;
  /** The label `name` as the block's providers publish it, found on first use (after setup). */
  label(name: string): MetaLabel;
}

export const METADATA = new OfferKey<MetadataCollector>("metadata");

/** The block's collector, when the block has a `metadata` directive (it is set up before every
 * other plugin, CoreDNS's plugin.cfg puts it near the top). */
export function metadataOf(shared: ReadonlyMap<string, unknown>): MetadataCollector | undefined {
  return offered(shared, METADATA);
}

/** `name` has the form CoreDNS asks of a label: `plugin/NAME`, both sides not empty. */
export function isLabel(name: string): boolean {
  const slash = name.indexOf("/");
  return slash > 0 && slash < name.length - 1;
}
