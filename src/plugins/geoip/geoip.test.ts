// geoip against databases written by MaxMind's own writer: every label CoreDNS publishes, from City,
// Country and ASN databases, checked against what libmaxminddb's mmdblookup reads from the same file;
// the client subnet option; and each bad database or line refused with the Corefile's file:line.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup } from "./setup.ts";
import { setup as metadataSetup } from "../metadata/setup.ts";
import { metadataOf } from "../metadata/labels.ts";
import { decimal } from "./labels.ts";
import { subnetAddress } from "./client.ts";
import { EdnsOption } from "../../dns/constants.ts";
import type { Directive } from "../../corefile/types.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { CAMBRIDGE, cityRecord, mmdbLookup, writeMmdb } from "../../../test/helpers/mmdb.ts";

const PARIS = cityRecord({
  city: "Paris",
  country: "FR",
  countryName: "France",
  eu: true,
  continent: "EU",
  continentName: "Europe",
  latitude: 48.8566,
  longitude: 2.3522,
});

const ecs = (family: number, prefix: number, ...octets: number[]) => ({
  udpSize: 1232,
  version: 0,
  do: false,
  options: [{ code: EdnsOption.ECS, data: Uint8Array.from([0, family, prefix, 0, ...octets]) }],
});

describe("geoip", () => {
  let tmp: string;
  const path = (name: string) => join(tmp, name);
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "clusterdns-geoip-"));
    writeMmdb(path("city.mmdb"), "GeoLite2-City", [
      { network: "127.0.0.2/32", record: CAMBRIDGE },
      { network: "192.0.2.0/24", record: PARIS },
      { network: "2001:db8::/32", record: PARIS },
    ]);
    writeMmdb(path("country.mmdb"), "GeoLite2-Country", [
      { network: "127.0.0.0/24", record: { country: { iso_code: "DE", names: { en: "Germany" } } } },
    ]);
    writeMmdb(path("asn.mmdb"), "GeoLite2-ASN", [
      {
        network: "127.0.0.0/24",
        record: { autonomous_system_number: 396982, autonomous_system_organization: "GOOGLE-CLOUD-PLATFORM" },
      },
    ]);
    writeMmdb(path("anonymous.mmdb"), "GeoIP2-Anonymous-IP", [{ network: "127.0.0.0/8", record: {} }]);
    writeFileSync(path("garbage.mmdb"), "not a database\n");
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** The labels a block with `metadata` and this geoip line publishes. */
  async function labels(args: string[], block?: Directive[]) {
    const f = fakeContext({ root: tmp });
    await metadataSetup(dir("metadata"), f.ctx);
    assert.equal(await setup(dir("geoip", args, block), f.ctx), undefined, "no handler");
    await f.start();
    const collector = metadataOf(f.ctx.block.shared)!;
    return {
      f,
      read: (label: string, remoteAddress: string, edns?: ReturnType<typeof ecs>) =>
        collector.label(label).value({ qname: "example.org.", qtype: 1, remoteAddress, edns }),
      perClient: (label: string) => collector.label(label).perClient,
    };
  }

  it("publishes CoreDNS's city labels, each as mmdblookup reads the same file", async () => {
    const { read, perClient } = await labels(["city.mmdb"]);
    const want: [string, string, string[]][] = [
      ["geoip/city/name", "Cambridge", ["city", "names", "en"]],
      ["geoip/country/code", "GB", ["country", "iso_code"]],
      ["geoip/country/name", "United Kingdom", ["country", "names", "en"]],
      ["geoip/country/is_in_european_union", "false", ["country", "is_in_european_union"]],
      ["geoip/continent/code", "EU", ["continent", "code"]],
      ["geoip/continent/name", "Europe", ["continent", "names", "en"]],
      ["geoip/timezone", "Europe/London", ["location", "time_zone"]],
      ["geoip/postalcode", "CB4", ["postal", "code"]],
    ];
    for (const [label, value, fields] of want) {
      assert.equal(read(label, "127.0.0.2"), value, label);
      assert.equal(await mmdbLookup(path("city.mmdb"), "127.0.0.2", ...fields), value, `mmdblookup ${label}`);
    }
    // mmdblookup prints doubles with 6 decimals; the label has the fewest digits that read back.
    assert.equal(read("geoip/latitude", "127.0.0.2"), "52.2242");
    assert.equal(Number(await mmdbLookup(path("city.mmdb"), "127.0.0.2", "location", "latitude")), 52.2242);
    assert.equal(read("geoip/longitude", "127.0.0.2"), "0.1315");
    assert.equal(read("geoip/subdivisions/code", "127.0.0.2"), "ENG,CAM");
    assert.equal(read("geoip/country/is_in_european_union", "192.0.2.77"), "true");
    assert.equal(read("geoip/city/name", "2001:db8::1"), "Paris", "IPv6 clients");
    assert.equal(
      read("geoip/city/name", "::ffff:127.0.0.2"),
      "Cambridge",
      "IPv4 through a dual-stack socket",
    );
    assert.equal(perClient("geoip/city/name"), true, "a reply built from it is the client's own");
  });

  it("an address no network holds gets CoreDNS's empty values; an ASN label is not a City database's", async () => {
    const { read } = await labels(["city.mmdb"]);
    assert.equal(await mmdbLookup(path("city.mmdb"), "127.0.0.9"), undefined, "mmdblookup: no entry");
    assert.equal(read("geoip/city/name", "127.0.0.9"), "");
    assert.equal(read("geoip/latitude", "127.0.0.9"), "");
    assert.equal(read("geoip/country/is_in_european_union", "127.0.0.9"), "false");
    assert.equal(read("geoip/subdivisions/code", "127.0.0.9"), "");
    assert.equal(read("geoip/asn/number", "127.0.0.2"), undefined);
    assert.equal(read("geoip/unknown", "127.0.0.2"), undefined);
  });

  it("a Country database gives the city labels it has; an ASN database the asn ones", async () => {
    const country = await labels(["country.mmdb"]);
    assert.equal(country.read("geoip/country/code", "127.0.0.5"), "DE");
    assert.equal(country.read("geoip/city/name", "127.0.0.5"), "");
    const asn = await labels(["asn.mmdb"]);
    assert.equal(asn.read("geoip/asn/number", "127.0.0.5"), "396982");
    assert.equal(asn.read("geoip/asn/org", "127.0.0.5"), "GOOGLE-CLOUD-PLATFORM");
    assert.equal(
      await mmdbLookup(path("asn.mmdb"), "127.0.0.5", "autonomous_system_organization"),
      "GOOGLE-CLOUD-PLATFORM",
    );
    assert.equal(asn.read("geoip/country/code", "127.0.0.5"), undefined);
  });

  it("edns-subnet looks up the client subnet option's address, and the source without one", async () => {
    const plain = await labels(["city.mmdb"]);
    assert.equal(
      plain.read("geoip/city/name", "127.0.0.2", ecs(1, 24, 192, 0, 2)),
      "Cambridge",
      "option off",
    );
    const { read } = await labels(["city.mmdb"], [dir("edns-subnet")]);
    assert.equal(read("geoip/city/name", "127.0.0.2", ecs(1, 24, 192, 0, 2)), "Paris");
    assert.equal(read("geoip/city/name", "127.0.0.2", ecs(2, 48, 0x20, 0x01, 0x0d, 0xb8, 0, 0)), "Paris");
    assert.equal(read("geoip/city/name", "127.0.0.2"), "Cambridge", "no option");
    assert.equal(
      read("geoip/city/name", "127.0.0.2", ecs(1, 24, 192, 0)),
      "Cambridge",
      "malformed: the source",
    );
  });

  it("the subnet option's address is read as RFC 7871 lays it out", () => {
    assert.equal(subnetAddress(ecs(1, 0)), "0.0.0.0");
    assert.equal(subnetAddress(ecs(1, 17, 10, 1, 128)), "10.1.128.0");
    assert.equal(subnetAddress(ecs(2, 56, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0xff)), "2001:db8:1:ff00:0:0:0:0");
    for (const bad of [ecs(3, 8, 1), ecs(1, 33, 1, 2, 3, 4, 5), ecs(1, 8, 1, 2), ecs(1, 16, 1)]) {
      assert.equal(subnetAddress(bad), undefined);
    }
  });

  it("writes floats as Go's FormatFloat(f, 'f', -1) does", () => {
    assert.equal(decimal(52.2242), "52.2242");
    assert.equal(decimal(-0.1315), "-0.1315");
    assert.equal(decimal(1.5e-7), "0.00000015");
    assert.equal(decimal(-2e-7), "-0.0000002");
    assert.equal(decimal(0), "0");
    assert.equal(decimal(undefined), "");
  });

  it("without metadata in the block, says so at its line", async () => {
    const f = fakeContext({ root: tmp });
    await setup(dir("geoip", ["city.mmdb"], undefined, 7), f.ctx);
    assert.ok(f.logs.some((l) => l.at === "Corefile:7" && /no metadata directive/.test(l.msg)));
  });

  it("refuses a bad line or database with the Corefile's file:line", async () => {
    await assertConfigErrors(
      setup,
      [
        [dir("geoip", [], undefined, 4), /^Corefile:4 - .*geoip: 'geoip' takes 1 argument/],
        [dir("geoip", ["a", "b"], undefined, 4), /^Corefile:4 - .*geoip: 'geoip' takes 1 argument/],
        [
          dir("geoip", ["city.mmdb"], [dir("languages", ["en"], undefined, 5)]),
          /^Corefile:5 - .*'languages'/,
        ],
        [dir("geoip", ["city.mmdb"], [dir("edns-subnet", ["x"], undefined, 6)]), /^Corefile:6 - .*geoip: /],
        [
          dir("geoip", ["missing.mmdb"], undefined, 8),
          /^Corefile:8 - .*geoip: cannot read '.*missing\.mmdb': ENOENT/,
        ],
        [
          dir("geoip", ["garbage.mmdb"], undefined, 9),
          /^Corefile:9 - .*geoip: '.*garbage\.mmdb' is not a MaxMind DB file/,
        ],
        [
          dir("geoip", ["anonymous.mmdb"], undefined, 10),
          /^Corefile:10 - .*geoip: '.*anonymous\.mmdb' is a database of type 'GeoIP2-Anonymous-IP', which geoip does not read/,
        ],
      ],
      () => fakeContext({ root: tmp }).ctx,
    );
  });
});
