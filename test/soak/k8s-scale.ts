// Scale as a part of the reliability suite: bench/scale.ts's cluster of 100,000 services (about half
// a million endpoints) plus a headless service of 5,000 endpoints, read through the test API server
// and from an `objects` file. Reports start to ready, RSS and its peaks against CoreDNS's memory
// formula, and how the big service's A answer comes back: as many records as fit, with TC, on each
// transport. Reduced: 200 services (k8s-scale.test.ts checks the same without the full figures).
//   npm run soak -- k8s-scale [--reduced]     (or node test/soak/k8s-scale.ts [--reduced])

import { scaleRows, scaleTables } from "../../bench/scale.ts";
import { Report, runAlone, type PartOptions, type SoakPart } from "./part.ts";

const BIG_HEADLESS = 5000;

export const k8sScale: SoakPart = {
  name: "k8s-scale",
  what: "100,000 services and a 5,000-endpoint headless service through the API and an objects file",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("k8s-scale");
    const rows = await scaleRows([o.reduced ? 200 : 100_000], ["api", "objects"], BIG_HEADLESS, o.log);
    o.log(`\n${scaleTables(rows, BIG_HEADLESS)}`);
    for (const r of rows) {
      const at = `${r.services} services, ${r.source}`;
      report.check(`${at}: start to ready`, `${r.readyS} s`, Number(r.readyS) > 0, "ready");
      report.check(
        `${at}: RSS when ready`,
        r.rss,
        r.rss <= r.coredns,
        `<= CoreDNS's formula, ${r.coredns} MB`,
        "MB",
      );
      report.note(`${at}: peak at start`, r.startPeak, "MB");
      report.note(`${at}: peak in relist`, r.relistPeak);
      for (const b of r.big) {
        const full = b.tc && b.octets <= b.limit && b.records > 0;
        report.check(
          `${at}: ${BIG_HEADLESS}-endpoint A, ${b.transport}`,
          `${b.records} records, ${b.octets} octets${b.tc ? ", TC" : ""}`,
          full,
          `partial with TC, <= ${b.limit} octets`,
        );
      }
    }
    return report;
  },
};

if (import.meta.main) await runAlone(k8sScale);
