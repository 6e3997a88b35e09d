// MaxMind DB files for the geoip tests, written by MaxMind's own writer (Debian's
// libmaxmind-db-writer-perl, through write-mmdb.pl), and read back with libmaxminddb's mmdblookup
// (Debian's mmdb-bin): the two real counterparts clusterdns's reader is checked against.

import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const WRITER = join(import.meta.dirname, "write-mmdb.pl");

export interface Network {
  /** "127.0.0.2/32", "2001:db8::/32" */
  network: string;
  record: Record<string, unknown>;
}

/** Writes `networks` to `path` as a database of `type` ("GeoLite2-City"). */
export function writeMmdb(path: string, type: string, networks: Network[]): void {
  execFileSync("perl", [WRITER, type, path], { input: JSON.stringify(networks), timeout: 30_000 });
}

/** What mmdblookup reads at `fields` of `ip`'s record ("country iso_code"): the value's text (a string's
 * without quotes), or undefined when the file has no such value. */
export async function mmdbLookup(path: string, ip: string, ...fields: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run("mmdblookup", ["--file", path, "--ip", ip, ...fields], { timeout: 15_000 });
    const m = /^\s*(.*?) <\w+>\s*$/m.exec(stdout);
    return m === null ? undefined : m[1].replace(/^"(.*)"$/, "$1");
  } catch {
    return undefined;
  }
}

/** A city record in the shape of GeoIP2's City databases. */
export function cityRecord(o: {
  city?: string;
  country: string;
  countryName: string;
  eu?: boolean;
  continent: string;
  continentName: string;
  latitude?: number;
  longitude?: number;
  timeZone?: string;
  postal?: string;
  subdivisions?: string[];
}): Record<string, unknown> {
  return {
    ...(o.city === undefined ? {} : { city: { geoname_id: 1, names: { en: o.city } } }),
    continent: { code: o.continent, names: { en: o.continentName } },
    country: { iso_code: o.country, names: { en: o.countryName }, is_in_european_union: o.eu ?? false },
    location: {
      ...(o.latitude === undefined ? {} : { latitude: o.latitude, longitude: o.longitude }),
      ...(o.timeZone === undefined ? {} : { time_zone: o.timeZone }),
    },
    ...(o.postal === undefined ? {} : { postal: { code: o.postal } }),
    ...(o.subdivisions === undefined ? {} : { subdivisions: o.subdivisions.map((c) => ({ iso_code: c })) }),
  };
}

/** A client in Cambridge, GB: every city label has a value. */
export const CAMBRIDGE = cityRecord({
  city: "Cambridge",
  country: "GB",
  countryName: "United Kingdom",
  continent: "EU",
  continentName: "Europe",
  latitude: 52.2242,
  longitude: 0.1315,
  timeZone: "Europe/London",
  postal: "CB4",
  subdivisions: ["ENG", "CAM"],
});
