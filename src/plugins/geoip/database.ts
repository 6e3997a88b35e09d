// A MaxMind DB (.mmdb) file opened for geoip, read with mmdb-lib (the reader under npm's `maxmind`
// package, without its file watcher and cache, which geoip does not need). Which of CoreDNS's schemas
// the file holds comes from its metadata's database type, the way CoreDNS's reader library
// (oschwald/geoip2-golang) decides: City lookups are allowed on Country and Enterprise databases,
// ASN lookups on ISP ones, and any other type is refused.

import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { Reader, Response } from "mmdb-lib";

export type Schema = "city" | "asn";

const CITY: Schema[] = ["city"];
const ASN: Schema[] = ["asn"];

/** geoip2-golang's database types, by the schemas CoreDNS reads of them. */
const SCHEMAS: Record<string, Schema[]> = {
  "GeoLite2-City": CITY,
  "GeoIP2-City": CITY,
  "GeoIP2-City-Africa": CITY,
  "GeoIP2-City-Asia-Pacific": CITY,
  "GeoIP2-City-Europe": CITY,
  "GeoIP2-City-North-America": CITY,
  "GeoIP2-City-South-America": CITY,
  "GeoIP2-Precision-City": CITY,
  "GeoLite2-Country": CITY,
  "GeoIP2-Country": CITY,
  "DBIP-City-Lite": CITY,
  "DBIP-Country-Lite": CITY,
  "DBIP-Country": CITY,
  "DBIP-Location (compat=City)": CITY,
  "GeoIP2-Enterprise": CITY,
  "DBIP-ISP (compat=Enterprise)": CITY,
  "DBIP-Location-ISP (compat=Enterprise)": CITY,
  "GeoLite2-ASN": ASN,
  "DBIP-ASN-Lite (compat=GeoLite2-ASN)": ASN,
  "GeoIP2-ISP": ASN,
  "GeoIP2-Precision-ISP": ASN,
};

/** Records decoded, by their offset in the file: a file holds each record once however many networks
 * share it (every network of a city), so clients of one place decode it once. Bounded: emptied when
 * full (about 1 KB a City record, so a few MiB at most). */
class RecordCache {
  static readonly MAX = 4096;
  readonly #map = new Map<string | number, unknown>();

  get(offset: string | number): unknown {
    return this.#map.get(offset);
  }

  set(offset: string | number, value: unknown): void {
    if (this.#map.size >= RecordCache.MAX) this.#map.clear();
    this.#map.set(offset, value);
  }
}

/** A record as the file holds it: maps, arrays, strings, numbers and booleans. */
export type GeoRecord = Readonly<Record<string, unknown>>;

export interface GeoDatabase {
  /** The metadata's database type ("GeoLite2-City"). */
  readonly type: string;
  readonly schemas: readonly Schema[];
  /** The record of the network that holds `ip` (an IPv4 or IPv6 address in text), {} when no
   * network does (CoreDNS's labels are then empty strings); undefined for text that is no address
   * or a record the file cannot give (a damaged file). */
  lookup(ip: string): GeoRecord | undefined;
}

/** Opens `path`; rejects with an Error whose message says what is wrong with the file. mmdb-lib is
 * loaded here, so a Corefile without geoip loads none of it. */
export async function openDatabase(path: string): Promise<GeoDatabase> {
  const mmdb = await import("mmdb-lib");
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new Error(
      `cannot read '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
  let reader: Reader<Response>;
  try {
    reader = new mmdb.Reader<Response>(bytes, { cache: new RecordCache() });
  } catch (err) {
    throw new Error(`'${path}' is not a MaxMind DB file: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const type = reader.metadata.databaseType;
  const schemas = Object.hasOwn(SCHEMAS, type) ? SCHEMAS[type] : undefined;
  if (schemas === undefined) {
    throw new Error(
      `'${path}' is a database of type '${type}', which geoip does not read (City, Country, Enterprise, ASN or ISP)`,
    );
  }
  return {
    type,
    schemas,
    lookup(ip) {
      if (isIP(ip) === 0) return undefined;
      try {
        return (reader.get(ip) as GeoRecord | null) ?? {};
      } catch {
        return undefined;
      }
    },
  };
}
