// How the store's values are kept in off-heap tables (../../../offheap/). PLACEHOLDER: every value as
// its JSON text, until the compact binary forms replace them.

import type { Codec } from "../../../offheap/table.ts";
import type { ByteReader, ByteWriter } from "../../../offheap/bytes.ts";
import type { EndpointGroup, PodRef, Service, SlimPod } from "../model/slim-types.ts";

function json<V>(): Codec<V> {
  return {
    write: (w: ByteWriter, v: V) => w.str(JSON.stringify(v)),
    read: (r: ByteReader) => JSON.parse(r.str()) as V,
  };
}

export const serviceCodec: Codec<Service> = json();
/** One EndpointSlice. */
export const groupCodec: Codec<EndpointGroup> = json();
/** The groups of one legacy Endpoints object (one per subset). */
export const groupsCodec: Codec<readonly EndpointGroup[]> = json();
export const podCodec: Codec<SlimPod> = json();
export const podRefsCodec: Codec<readonly PodRef[]> = json();
/** A list of keys (OneOrMany's values). */
export const keysCodec: Codec<readonly string[]> = json();
export const countCodec: Codec<number> = json();
export const flagCodec: Codec<boolean> = json();
