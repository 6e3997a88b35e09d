// Builds the batched UDP engine (native/udp.c) and the TCP send-queue probe (native/tcp-queue.c), both
// in binding.gyp, with node-gyp: `npm ci` runs it as the package's install script, `npm run
// build:native` by hand. It compiles against the headers of the Node that runs it (its release ships
// include/node beside bin/), never downloaded ones. A build that cannot happen or fails prints one
// line and exits 0: clusterdns then uses dgram (and counts only Node's part of unread TCP replies).
//   node native/build.ts

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const log = join(root, "build", "native-build.log");

function give(reason: string): never {
  process.stdout.write(
    `clusterdns: batched UDP engine not built (${reason}); UDP will use dgram, and TCP backpressure ` +
      `counts only the replies Node holds\n`,
  );
  process.exit(0);
}

if (process.platform !== "linux") give(`recvmmsg/sendmmsg are Linux only, this is ${process.platform}`);

// bin/node -> the release folder whose include/node holds node_api.h and common.gypi.
const nodedir = resolve(dirname(process.execPath), "..");
if (!existsSync(join(nodedir, "include", "node", "node_api.h"))) {
  give(`no Node headers at ${join(nodedir, "include", "node")}`);
}

// npm's own node-gyp: npm names it to the scripts it runs; outside npm, node-gyp on PATH.
const gyp = process.env.npm_config_node_gyp;
const [cmd, args] = gyp ? [process.execPath, [gyp]] : ["node-gyp", []];
const run = spawnSync(cmd, [...args, "rebuild", `--nodedir=${nodedir}`], {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, npm_config_nodedir: nodedir },
});
mkdirSync(dirname(log), { recursive: true });
writeFileSync(log, `${run.stdout ?? ""}${run.stderr ?? ""}${run.error ? String(run.error) : ""}`);
if (run.error) give(`cannot run node-gyp: ${run.error.message}`);
if (run.status !== 0) give(`node-gyp failed, see ${log}; needs g++, make and python3`);
process.stdout.write(
  "clusterdns: batched UDP engine and TCP send-queue probe built (build/Release/clusterdns_{udp,tcp}.node)\n",
);
