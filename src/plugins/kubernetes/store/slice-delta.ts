// What an EndpointSlice event changed, cut down to the endpoints that matter for it. The store tells
// the answer cache which names an event altered by comparing the slice's footprint (footprint.ts)
// before and after; taking both over the whole slice listed every endpoint's names twice, the most a
// watch storm allocated. An endpoint that is the same before and after adds the same to every name
// on both sides, so both footprints can leave it out: a name whose answer changed still differs
// between them, over the endpoints that changed (the service's own name, its SRV and zonal names, an
// endpoint's name). Its address stays on both sides when a changed endpoint has it too: the address
// index drops an address missing from the footprint after, and its PTR targets are all the endpoints
// with that address. Only a new order of otherwise equal records goes unreported, which changes no
// answer's records. Endpoints are matched by place (a common head and tail), as the EndpointSlice controller
// edits slices in place.

import type { Endpoint, EndpointGroup } from "../model/slim-types.ts";
import { sameEndpoint, samePorts } from "../model/same-group.ts";

/** The published groups of a slice before (`a`) and after (`b`), each `published()`'s [] or [group],
 * cut down to what their footprints need to compare. */
export function sliceDelta(
  a: readonly EndpointGroup[],
  b: readonly EndpointGroup[],
): [readonly EndpointGroup[], readonly EndpointGroup[]] {
  // A slice that appears, goes, or changes its ports changes every name of it: compared whole.
  if (a.length !== 1 || b.length !== 1 || !samePorts(a[0], b[0])) return [a, b];
  const p = a[0].endpoints;
  const n = b[0].endpoints;
  let head = 0;
  const most = Math.min(p.length, n.length);
  while (head < most && sameEndpoint(p[head], n[head])) head++;
  let tail = 0;
  while (tail < most - head && sameEndpoint(p[p.length - 1 - tail], n[n.length - 1 - tail])) tail++;
  const changedP = p.slice(head, p.length - tail);
  const changedN = n.slice(head, n.length - tail);
  const ips = new Set<string>();
  for (const e of changedP) ips.add(e.ip);
  for (const e of changedN) ips.add(e.ip);
  // The unchanged endpoints that share an address with a changed one stay on both sides.
  const shared: Endpoint[] = [];
  const keep = (e: Endpoint) => {
    if (ips.has(e.ip)) shared.push(e);
  };
  for (let i = 0; i < head; i++) keep(p[i]);
  for (let i = p.length - tail; i < p.length; i++) keep(p[i]);
  const side = (g: EndpointGroup, changed: Endpoint[]): EndpointGroup[] => {
    const endpoints = shared.length === 0 ? changed : [...shared, ...changed];
    return endpoints.length === 0 ? [] : [{ ...g, endpoints }];
  };
  return [side(a[0], changedP), side(b[0], changedN)];
}
