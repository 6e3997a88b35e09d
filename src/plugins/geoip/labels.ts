// The labels geoip publishes (CoreDNS's geoip README, "Metadata Labels"): values of the client's
// record in the database, as strings the way CoreDNS writes them. A City, Country or Enterprise
// database gives the city labels, an ASN or ISP database the asn ones.

import type { MetaLabel, MetadataProvider } from "../metadata/labels.ts";
import type { GeoDatabase, GeoRecord, Schema } from "./database.ts";
import { clientAddress } from "./client.ts";

type Field = (r: GeoRecord) => string;

const CITY_LABELS: Record<string, Field> = {
  "geoip/city/name": (r) => text(at(r, "city", "names", "en")),
  "geoip/country/code": (r) => text(at(r, "country", "iso_code")),
  "geoip/country/name": (r) => text(at(r, "country", "names", "en")),
  "geoip/country/is_in_european_union": (r) => String(at(r, "country", "is_in_european_union") === true),
  "geoip/continent/code": (r) => text(at(r, "continent", "code")),
  "geoip/continent/name": (r) => text(at(r, "continent", "names", "en")),
  "geoip/latitude": (r) => decimal(at(r, "location", "latitude")),
  "geoip/longitude": (r) => decimal(at(r, "location", "longitude")),
  "geoip/timezone": (r) => text(at(r, "location", "time_zone")),
  "geoip/postalcode": (r) => text(at(r, "postal", "code")),
  // Every level's code, empty ones too, as CoreDNS joins them.
  "geoip/subdivisions/code": (r) => {
    const subs = at(r, "subdivisions");
    return Array.isArray(subs) ? subs.map((s: GeoRecord) => text(at(s, "iso_code"))).join(",") : "";
  },
};

const ASN_LABELS: Record<string, Field> = {
  "geoip/asn/number": (r) => {
    const n = at(r, "autonomous_system_number");
    return typeof n === "number" ? String(n) : "0";
  },
  "geoip/asn/org": (r) => text(at(r, "autonomous_system_organization")),
};

const BY_SCHEMA: Record<Schema, Record<string, Field>> = { city: CITY_LABELS, asn: ASN_LABELS };

export interface GeoipOptions {
  /** Look up the EDNS Client Subnet address when the query has one. */
  readonly ednsSubnet: boolean;
}

export function geoipMetadata(db: GeoDatabase, o: GeoipOptions): MetadataProvider {
  // The labels of one query are read one after another: the last lookup serves them all.
  let lastIp = "";
  let lastRecord: GeoRecord | undefined;
  const record = (ip: string) => {
    if (ip !== lastIp) {
      lastRecord = db.lookup(ip);
      lastIp = ip;
    }
    return lastRecord;
  };
  return {
    label(name): MetaLabel | undefined {
      let field: Field | undefined;
      for (const s of db.schemas) if (Object.hasOwn(BY_SCHEMA[s], name)) field = BY_SCHEMA[s][name];
      if (field === undefined) return undefined;
      const f = field;
      return {
        value: (q) => {
          const r = record(clientAddress(q, o.ednsSubnet));
          return r === undefined ? undefined : f(r);
        },
        perClient: true,
      };
    },
  };
}

function at(r: GeoRecord, ...path: string[]): unknown {
  let v: unknown = r;
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as GeoRecord)[k];
  }
  return v;
}

function text(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** A float in base 10 with the fewest digits that read back as it, never in exponent form (Go's
 * FormatFloat(f, 'f', -1, 64), which CoreDNS uses); "" when the record has none. */
export function decimal(v: unknown): string {
  if (typeof v !== "number" || !Number.isFinite(v)) return "";
  const s = String(v);
  const e = s.indexOf("e");
  if (e < 0) return s;
  const sign = v < 0 ? "-" : "";
  const digits = s.slice(sign.length, e).replace(".", "");
  const point = s.slice(sign.length, e).indexOf(".");
  // Where the decimal point goes, counted from the first digit.
  const at = (point < 0 ? e - sign.length : point) + Number(s.slice(e + 1));
  if (at <= 0) return `${sign}0.${"0".repeat(-at)}${digits}`;
  if (at >= digits.length) return sign + digits + "0".repeat(at - digits.length);
  return `${sign}${digits.slice(0, at)}.${digits.slice(at)}`;
}
