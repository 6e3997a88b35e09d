// The test API server as a process of its own, for tests that need it inside a network namespace
// (where the test process cannot reach): `node test/k8s/serve.ts OBJECTS.json DIR` serves the objects
// (a JSON array of Kubernetes objects with their `kind`), writes DIR/kubeconfig pointing at itself,
// prints "serving URL" and runs until its standard input closes, so it never outlives the test.

import { readFileSync } from "node:fs";
import { serveCluster } from "../../bench/cluster-api.ts";

const [objectsFile, dir] = process.argv.slice(2);
if (!objectsFile || !dir) {
  process.stderr.write("usage: node test/k8s/serve.ts OBJECTS.json DIR\n");
  process.exit(2);
}
const objects = JSON.parse(readFileSync(objectsFile, "utf8")) as object[];
const { api } = await serveCluster(objects, dir);
process.stdout.write(`serving ${api.url}\n`);
process.stdin.resume();
process.stdin.on("end", () => void api.close().then(() => process.exit(0)));
