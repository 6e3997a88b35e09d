// The questions the kubernetes plugin warms the answer path with (SetupContext.warmUp), taken from the
// store once it has synced: for the first services of the cluster, each kind of answer its clients
// ask for. A service's records as a transfer has them (addresses, SRV at the service's name and at
// named ports, a headless service's endpoints by hostname), the other address family (NODATA), the
// addresses' PTR names and pod names, and names that do not exist: one below the namespace and a
// search-list expansion of an outside name (NXDOMAIN). ExternalName services are left out: their
// answer chases the target, which may be upstream.

import { Type } from "../../../dns/constants.ts";
import { join, reverseName } from "../../../dns/name.ts";
import type { WarmQuestion } from "../../../setup/context.ts";
import type { StoreView } from "../store/store-view.ts";
import { isReverseZone } from "../names/zones.ts";
import { dashed } from "../model/addresses.ts";
import type { Records } from "./records.ts";
import { serviceRecords } from "./xfr.ts";

/** Services the questions come from; more questions than warm-up takes (server/warm-up.ts). */
const SERVICES = 300;

/** The questions, read on one consistent view of the store; none before it synced. */
export function warmUpQuestions(store: StoreView, records: Records): WarmQuestion[] {
  const zone = records.options.zones.find((z) => !isReverseZone(z));
  if (zone === undefined || !store.synced) return [];
  const collect = () => [...questions(store, records, zone)];
  return store.read ? store.read(collect) : collect();
}

function* questions(store: StoreView, records: Records, zone: string): Generator<WarmQuestion> {
  let n = 0;
  for (const svc of store.services()) {
    if (n++ >= SERVICES) return;
    if (svc.externalName !== undefined || !store.namespaceExposed(svc.ns)) continue;
    yield [join(`warm-up-absent-${n}.${svc.ns}.svc`, zone), Type.A];
    yield [join(`example.com.${svc.ns}.svc`, zone), Type.AAAA];
    for (const rr of serviceRecords(store, records, svc, zone)) {
      yield [rr.name, rr.type];
      if (!("address" in rr.data)) continue;
      const address = rr.data.address;
      yield [rr.name, rr.type === Type.A ? Type.AAAA : Type.A];
      const ptr = reverseName(address);
      if (ptr !== undefined) yield [ptr, Type.PTR];
      if (rr.type === Type.A) yield [join(`${dashed(address)}.${svc.ns}.pod`, zone), Type.A];
    }
  }
}
