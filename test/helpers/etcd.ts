// Starts Debian's real etcd (etcd-server) on loopback with free ports and a temporary data folder, and
// writes keys with etcd's own client, etcdctl (etcd-client).

import { spawn } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";

const run = promisify(execFile);

export interface EtcdServer {
  /** The client URL, http://127.0.0.1:PORT. */
  url: string;
  /** Puts a key, attached to lease `lease` (an ID from lease()) when given. */
  put(key: string, value: string, lease?: string): Promise<void>;
  /** Grants a lease of `seconds`: its ID, in hex as etcdctl prints it. */
  lease(seconds: number): Promise<string>;
  /** Adds user `user` with the root role and turns authentication on; later calls sign in as it. */
  enableAuth(user: string, password: string): Promise<void>;
  del(key: string): Promise<void>;
  /** Stops etcd (SIGTERM, then SIGKILL) and removes its data folder. */
  stop(): Promise<void>;
}

/** Serves clients over HTTPS with these files, and asks clients for a certificate the CA signed. */
export interface EtcdTls {
  ca: string;
  cert: string;
  key: string;
  /** etcdctl's own certificate and key (extendedKeyUsage clientAuth). */
  clientCert: string;
  clientKey: string;
}

export async function startEtcd(tls?: EtcdTls): Promise<EtcdServer> {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-etcd-"));
  const [client, peer] = [await freePort(), await freePort()];
  const url = `${tls ? "https" : "http"}://127.0.0.1:${client}`;
  const serve = tls
    ? [
        `--cert-file=${tls.cert}`,
        `--key-file=${tls.key}`,
        `--trusted-ca-file=${tls.ca}`,
        "--client-cert-auth",
      ]
    : [];
  const ask = tls ? [`--cacert=${tls.ca}`, `--cert=${tls.clientCert}`, `--key=${tls.clientKey}`] : [];
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = spawn(
    "etcd",
    [
      "--name=t",
      `--data-dir=${dir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=t=${peerUrl}`,
      ...serve,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  let login: string[] = [];
  const ctl = (...args: string[]) =>
    run("etcdctl", [`--endpoints=${url}`, ...ask, ...login, ...args], {
      env: { ...process.env, ETCDCTL_API: "3" },
      timeout: 10_000,
    });
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  // Bounded: 200 tries and 30 s, whichever comes first.
  const begun = performance.now();
  for (let i = 0; ; i++) {
    try {
      await ctl("endpoint", "health");
      break;
    } catch (err) {
      if (i >= 200 || performance.now() - begun > 30_000 || proc.exitCode !== null) {
        await stop();
        throw new Error(`etcd did not start: ${(err as Error).message}\n${stderr}`, { cause: err });
      }
      await sleep(50);
    }
  }
  return {
    url,
    put: async (key, value, lease) =>
      void (await ctl("put", ...(lease ? [`--lease=${lease}`] : []), key, value)),
    lease: async (seconds) => {
      const { stdout } = await ctl("lease", "grant", String(seconds));
      const id = /lease ([0-9a-f]+) granted/.exec(stdout)?.[1];
      if (!id) throw new Error(`etcdctl lease grant: ${stdout}`);
      return id;
    },
    enableAuth: async (user, password) => {
      await ctl("user", "add", `${user}:${password}`);
      if (user !== "root") await ctl("user", "grant-role", user, "root");
      await ctl("auth", "enable");
      login = [`--user=${user}:${password}`];
    },
    del: async (key) => void (await ctl("del", key)),
    stop,
  };
}
