// Every kustomization under deploy/ (deploy/, autoscaler/, node-local/ and its transparent/ variant,
// distributions/*) built by a real `kubectl kustomize`: it must build, and build objects of real kinds
// with real fields. The kubectl is $KUBECTL, else the one on PATH: Debian's kubernetes-client (1.20,
// whose kustomize is v2.0.3), which `./dev test` installs; where another kubectl owns /usr/bin/kubectl
// (the google-cloud-sdk package does) Debian's cannot install beside it, so point $KUBECTL at the one to
// check. A missing kubectl fails here: CI installs it, so a skip would only hide a broken overlay.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { KINDS, parseYaml, schemaErrors } from "./helpers/manifests.ts";
import { ROOT } from "./helpers/server.ts";

const DEPLOY = join(ROOT, "deploy");
const KUBECTL = process.env.KUBECTL ?? "kubectl";
const run = promisify(execFile);

/** Every folder under `dir` (itself included) that holds a kustomization.yaml. */
function kustomizations(dir: string): string[] {
  const here = existsSync(join(dir, "kustomization.yaml")) ? [dir] : [];
  const below = readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isDirectory())
    .flatMap(kustomizations);
  return [...here, ...below];
}

const dirs = kustomizations(DEPLOY);
const version = spawnSync(KUBECTL, ["version", "--client"], { encoding: "utf8", timeout: 20_000 });

test("kubectl is installed (./dev test installs Debian's kubernetes-client)", (t) => {
  assert.equal(
    version.error,
    undefined,
    `${KUBECTL}: ${version.error?.message}; apt-get install kubernetes-client`,
  );
  t.diagnostic(`${KUBECTL}: ${version.stdout.split("\n").filter(Boolean).join("; ")}`);
});

test("the kustomizations include every variant the docs tell users to apply", () => {
  const names = dirs.map((d) => relative(ROOT, d));
  for (const want of ["deploy", "deploy/autoscaler", "deploy/node-local", "deploy/node-local/transparent"]) {
    assert.ok(names.includes(want), `${want} is a kustomization`);
  }
});

for (const dir of dirs) {
  const name = relative(ROOT, dir);
  test(`kubectl kustomize ${name}/ builds real objects`, { skip: version.error !== undefined }, async () => {
    const { stdout } = await run(KUBECTL, ["kustomize", dir], { timeout: 60_000 });
    const objects = parseYaml(stdout, `kubectl kustomize ${name}`);
    assert.ok(objects.length > 0, "some objects");
    for (const o of objects) {
      const [apiVersion, model] = KINDS[o.kind] ?? [];
      assert.ok(model, `${o.kind} is a kind deploy/ uses`);
      assert.equal(o.apiVersion, apiVersion, `${o.kind} ${o.metadata.name}`);
      assert.deepEqual(schemaErrors(o, model, `${o.kind} ${o.metadata.name}`), []);
    }
  });
}
