// A reload's new instance takes over what the running one built and that did not change (the
// kubernetes store and its source, zone and hosts files as parsed): keyed by what each depends on,
// file contents by their stamp. The files here are rewritten with the same size and modification time,
// so only a re-read would see the new content: an answer from the old content proves the take-over;
// once the stamp or the source changes, the new content is answered.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Instance } from "../src/server/instance.ts";
import { Type } from "../src/dns/constants.ts";
import { readyInstance, reloadedInstance } from "./helpers/instance.ts";
import { namespace, service } from "./k8s/objects.ts";

/** Writes `path` with a modification time of whole seconds, which utimes sets back exactly. */
function writeStamped(path: string, text: string, seconds = 1_700_000_000): void {
  writeFileSync(path, text);
  utimesSync(path, seconds, seconds);
}

/** Rewrites `path` keeping its size and modification time (and inode): its stamp does not change. */
function rewriteSameStamp(path: string, text: string): void {
  const st = statSync(path);
  assert.equal(Buffer.byteLength(text), st.size, "the same size");
  writeStamped(path, text, st.mtimeMs / 1000);
}

/** Rewrites `path` with a modification time a second later: a new stamp. */
function rewriteNewStamp(path: string, text: string): void {
  writeStamped(path, text, statSync(path).mtimeMs / 1000 + 1);
}

/** The first A or TXT answer's data and TTL for `name`, through the instance's first listener. */
async function ask(inst: Instance, name: string, qtype = Type.A): Promise<string> {
  const m = await inst.pipelines[0].lookup(name, qtype, 1);
  const rr = m.answer[0];
  if (rr === undefined) return `rcode ${m.rcode}`;
  return `${JSON.stringify(rr.data)} ttl ${rr.ttl}`;
}

const zone = (address: string) => `$ORIGIN example.org.
@ 3600 IN SOA ns.example.org. admin.example.org. 1 7200 3600 1209600 3600
@ 3600 IN NS ns.example.org.
www 3600 IN A ${address}
`;

test("file and hosts: a reload takes over what was parsed while the file's stamp is the same", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-handover-"));
  const db = join(dir, "db.example");
  const hosts = join(dir, "hosts.txt");
  writeStamped(db, zone("192.0.2.1"));
  writeStamped(hosts, "192.0.2.1 h.hosts.test\n");
  const corefile = (ttl: number) => `example.org {
    file db.example
}
hosts.test {
    hosts hosts.txt hosts.test {
        ttl ${ttl}
        reload 0
    }
}
`;
  let inst = await readyInstance(corefile(60), dir);
  try {
    assert.match(await ask(inst, "www.example.org."), /192\.0\.2\.1/);
    rewriteSameStamp(db, zone("192.0.2.9"));
    rewriteSameStamp(hosts, "192.0.2.9 h.hosts.test\n");
    inst = await reloadedInstance(inst, corefile(61), dir);
    assert.match(await ask(inst, "www.example.org."), /192\.0\.2\.1/, "the zone was not read again");
    const h = inst.pipelines.find((p) => p.mux.zones.includes("hosts.test."))!;
    assert.match(
      JSON.stringify((await h.lookup("h.hosts.test.", Type.A, 1)).answer[0]),
      /192\.0\.2\.1.*"ttl":61|"ttl":61.*192\.0\.2\.1/,
      "hosts: the file not read again, the new ttl answered",
    );

    rewriteNewStamp(db, zone("192.0.2.7"));
    rewriteNewStamp(hosts, "192.0.2.7 h.hosts.test\n");
    inst = await reloadedInstance(inst, corefile(62), dir);
    assert.match(await ask(inst, "www.example.org."), /192\.0\.2\.7/, "a new stamp: read again");
    const h2 = inst.pipelines.find((p) => p.mux.zones.includes("hosts.test."))!;
    assert.match(JSON.stringify((await h2.lookup("h.hosts.test.", Type.A, 1)).answer[0]), /192\.0\.2\.7/);
  } finally {
    await inst.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("kubernetes: an unchanged source is taken over with the new ttl; a changed one is built anew; a rejected reload gives it back", async () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-handover-"));
  const objects = join(dir, "cluster.json");
  const cluster = (ip: string) =>
    JSON.stringify({
      kind: "List",
      items: [namespace("default"), service("default", "web", { clusterIP: ip })],
    });
  writeStamped(objects, cluster("10.96.0.11"));
  const corefile = (ttl: number, extra = "", bad = "") => `cluster.local {
    kubernetes {
        objects cluster.json
        ttl ${ttl}
        ${extra}
    }
}
${bad}
`;
  let inst = await readyInstance(corefile(5), dir);
  try {
    assert.match(await ask(inst, "web.default.svc.cluster.local."), /10\.96\.0\.11.*ttl 5/);
    rewriteSameStamp(objects, cluster("10.96.0.12"));

    // A Corefile whose second block fails set-up: the store the first block adopted goes back.
    await assert.rejects(
      reloadedInstance(inst, corefile(7, "", "example.org {\n    file missing.db\n}"), dir),
    );
    assert.match(await ask(inst, "web.default.svc.cluster.local."), /10\.96\.0\.11/, "still serving");

    inst = await reloadedInstance(inst, corefile(7), dir);
    assert.equal(inst.adopted, 1);
    assert.match(
      await ask(inst, "web.default.svc.cluster.local."),
      /10\.96\.0\.11.*ttl 7/,
      "the running store, and the new ttl",
    );

    inst = await reloadedInstance(inst, corefile(7, "namespaces default"), dir);
    assert.equal(inst.adopted, 0);
    assert.match(await ask(inst, "web.default.svc.cluster.local."), /10\.96\.0\.12/, "a new source: read");
  } finally {
    await inst.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
