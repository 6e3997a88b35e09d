// How the store's values are kept in off-heap tables (../../../offheap/): a compact binary form of
// each. What `read` returns serialises (sameJSON) exactly as what slim.ts made, keys in the same
// order, optional fields absent rather than undefined, since the store compares values that way.
// Reads run per DNS query on a cache miss: each builds its objects in one literal of a fixed shape
// per branch, with no intermediate arrays or closures. Text is UTF-8 (a lone surrogate, which no
// API object holds, reads back as U+FFFD).

import type { Codec } from "../../../offheap/table.ts";
import type { ByteReader, ByteWriter } from "../../../offheap/bytes.ts";
import type { EndpointGroup, PodRef, Service, SlimPod } from "../model/slim-types.ts";
import { readGroup, writeGroup } from "./group-codec.ts";
import { readAddresses, readPorts, writeAddresses, writePorts } from "./codec-parts.ts";

/** A service: one flag byte (its type's code, headless, publishNotReadyAddresses, and which optional
 * fields follow), name, namespace, ports, cluster IPs, then the ExternalName and the external list. */
export const serviceCodec: Codec<Service> = {
  write(w: ByteWriter, s: Service): void {
    const code = TYPES.indexOf(s.type);
    w.u8(
      (code < 0 ? OTHER_TYPE : code) |
        (s.headless ? HEADLESS : 0) |
        (s.publishNotReadyAddresses ? PUBLISH_NOT_READY : 0) |
        (s.externalName !== undefined ? EXTERNAL_NAME : 0) |
        (s.external !== undefined ? EXTERNAL : 0),
    );
    w.str(s.name);
    w.str(s.ns);
    if (code < 0) w.str(s.type);
    writePorts(w, s.ports);
    writeAddresses(w, s.clusterIPs);
    if (s.externalName !== undefined) w.str(s.externalName);
    if (s.external !== undefined) writeAddresses(w, s.external);
  },
  read(r: ByteReader): Service {
    const flags = r.u8();
    const name = r.str();
    const ns = r.str();
    const code = flags & TYPE_BITS;
    const type = code === OTHER_TYPE ? r.str() : TYPES[code];
    const ports = readPorts(r);
    const clusterIPs = readAddresses(r);
    const headless = (flags & HEADLESS) !== 0;
    const publishNotReadyAddresses = (flags & PUBLISH_NOT_READY) !== 0;
    // slim.ts's key order; the optional fields last.
    if ((flags & (EXTERNAL_NAME | EXTERNAL)) === 0) {
      return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless };
    }
    const externalName = (flags & EXTERNAL_NAME) !== 0 ? r.str() : undefined;
    if ((flags & EXTERNAL) === 0) {
      return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless, externalName };
    }
    const external = readAddresses(r);
    if (externalName === undefined) {
      return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless, external };
    }
    return { name, ns, type, ports, publishNotReadyAddresses, clusterIPs, headless, externalName, external };
  },
};

const TYPES = ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"];
const TYPE_BITS = 7;
/** A type the API does not know (object files): its text follows. */
const OTHER_TYPE = 7;
const HEADLESS = 8;
const PUBLISH_NOT_READY = 16;
const EXTERNAL_NAME = 32;
const EXTERNAL = 64;

/** One EndpointSlice. */
export const groupCodec: Codec<EndpointGroup> = { write: writeGroup, read: readGroup };

/** The groups of one legacy Endpoints object (one per subset). */
export const groupsCodec: Codec<readonly EndpointGroup[]> = {
  write(w: ByteWriter, groups: readonly EndpointGroup[]): void {
    w.uint(groups.length);
    for (const g of groups) writeGroup(w, g);
  },
  read(r: ByteReader): readonly EndpointGroup[] {
    const n = r.count();
    const out = new Array<EndpointGroup>(n);
    for (let i = 0; i < n; i++) out[i] = readGroup(r);
    return out;
  },
};

/** A pod's flags in one byte: hostNetwork, ownSearch. */
function writeFlags(w: ByteWriter, p: { hostNetwork?: true; ownSearch?: true }): void {
  w.u8((p.hostNetwork ? 1 : 0) | (p.ownSearch ? 2 : 0));
}

function withFlags<T extends object>(flags: number, o: T): T & { hostNetwork?: true; ownSearch?: true } {
  const out: T & { hostNetwork?: true; ownSearch?: true } = o;
  if (flags & 1) out.hostNetwork = true;
  if (flags & 2) out.ownSearch = true;
  return out;
}

/** A pod: a flag byte, namespace, name, addresses. */
export const podCodec: Codec<SlimPod> = {
  write(w: ByteWriter, p: SlimPod): void {
    writeFlags(w, p);
    w.str(p.ns);
    w.str(p.name);
    writeAddresses(w, p.ips);
  },
  read(r: ByteReader): SlimPod {
    const flags = r.u8();
    const ns = r.str();
    const name = r.str();
    return withFlags(flags, { ns, name, ips: readAddresses(r) });
  },
};

export const podRefsCodec: Codec<readonly PodRef[]> = {
  write(w: ByteWriter, refs: readonly PodRef[]): void {
    w.uint(refs.length);
    for (const p of refs) {
      writeFlags(w, p);
      w.str(p.ns);
      w.str(p.name);
    }
  },
  read(r: ByteReader): readonly PodRef[] {
    const n = r.count();
    const out = new Array<PodRef>(n);
    for (let i = 0; i < n; i++) {
      const flags = r.u8();
      const ns = r.str();
      out[i] = withFlags(flags, { ns, name: r.str() });
    }
    return out;
  },
};

/** A list of keys (OneOrMany's values). */
export const keysCodec: Codec<readonly string[]> = {
  write: (w: ByteWriter, keys: readonly string[]) => w.strs(keys),
  read: (r: ByteReader) => r.strs(),
};

export const countCodec: Codec<number> = {
  write: (w: ByteWriter, n: number) => w.uint(n),
  read: (r: ByteReader) => r.uint(),
};

export const flagCodec: Codec<boolean> = {
  write: (w: ByteWriter, b: boolean) => w.bool(b),
  read: (r: ByteReader) => r.bool(),
};
