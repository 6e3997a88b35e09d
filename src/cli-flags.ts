// Command-line flags in CoreDNS's spelling: `-conf FILE`, `--conf FILE` and `-conf=FILE` all work.

/** How UDP is read and sent (src/server/udp-engine.ts). */
export const UDP_ENGINES = ["dgram", "batched"] as const;
export type UdpEngineName = (typeof UDP_ENGINES)[number];

export interface Flags {
  conf?: string;
  /** Every -conf, in order: -validate takes several (the coredns ConfigMap, then coredns-custom). */
  confs?: string[];
  dnsPort?: number;
  version: boolean;
  plugins: boolean;
  reusePort: boolean;
  /** -validate: check the Corefile and every file it names, without starting. */
  validate: boolean;
  /** -udp.engine: how UDP is read and sent; unset: batched where it was built, else dgram. */
  udpEngine?: UdpEngineName;
  /** -workers: threads answering DNS (the main thread is one), or "auto" (the cgroup's CPU quota);
   * unset: `multisocket` in the Corefile, else 1. */
  workers?: number | "auto";
  /** -memory.budget: MiB of resident memory to keep under (0: none); unset: 3/4 of the cgroup's limit. */
  memoryBudgetMiB?: number;
  help: boolean;
}

export class FlagError extends Error {
  readonly code = "CDNS_ERR_FLAG";
}

const valued = new Set(["conf", "dns.port", "udp.engine", "memory.budget", "workers"]);
/** As CoreDNS's multisocket bounds its NUM_SOCKETS. */
export const MAX_WORKERS = 1024;
const boolean = new Set(["version", "plugins", "reuseport", "validate", "help", "h"]);
/** k8s-dns-node-cache's own flags: its DaemonSet's args, kept when the image is swapped. */
const NODE_CACHE = new Set([
  "localip",
  "interfacename",
  "setupinterface",
  "setupiptables",
  "setupebtables",
  "skipteardown",
  "syncinterval",
  "upstreamsvc",
  "health-port",
  "basecorefile",
  "kubednscm",
  "config-dir",
  "metrics-listen-address",
  "pidfile",
]);

function unknownFlag(arg: string, name: string): FlagError {
  if (!NODE_CACHE.has(name)) return new FlagError(`unknown flag '${arg}' (see -help)`);
  return new FlagError(
    `unknown flag '${arg}': node-cache's (NodeLocal DNSCache); clusterdns sets the node up from the Corefile's nodelocal directive and the block's bind (deploy/node-local/)`,
  );
}

export function parseFlags(argv: string[]): Flags {
  const f: Flags = { version: false, plugins: false, reusePort: false, validate: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--?([A-Za-z0-9][\w.-]*)(?:=(.*))?$/.exec(arg);
    if (!m) throw new FlagError(`unexpected argument '${arg}'`);
    const [, name, inline] = m;
    if (boolean.has(name)) {
      if (inline !== undefined) throw new FlagError(`flag -${name} takes no value`);
      if (name === "version") f.version = true;
      else if (name === "plugins") f.plugins = true;
      else if (name === "reuseport") f.reusePort = true;
      else if (name === "validate") f.validate = true;
      else f.help = true;
      continue;
    }
    if (!valued.has(name)) throw unknownFlag(arg, name);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new FlagError(`flag -${name} needs a value`);
    if (name === "conf") {
      f.conf ??= value;
      (f.confs ??= []).push(value);
    } else if (name === "udp.engine") {
      if (!(UDP_ENGINES as readonly string[]).includes(value))
        throw new FlagError(`-udp.engine: '${value}' is not one of ${UDP_ENGINES.join(", ")}`);
      f.udpEngine = value as UdpEngineName;
    } else if (name === "workers") {
      if (value !== "auto" && (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS))
        throw new FlagError(`-workers: '${value}' is not auto or a number from 1 to ${MAX_WORKERS}`);
      f.workers = value === "auto" ? "auto" : Number(value);
    } else if (name === "memory.budget") {
      if (!/^\d+$/.test(value)) throw new FlagError(`-memory.budget: '${value}' is not a number of MiB`);
      f.memoryBudgetMiB = Number(value);
    } else {
      if (!/^\d+$/.test(value) || Number(value) > 65535)
        throw new FlagError(`-dns.port: '${value}' is not a port`);
      f.dnsPort = Number(value);
    }
  }
  return f;
}

export const USAGE = `Usage: clusterdns [flags]
       clusterdns resolve NAME [flags]   (what a pod's resolver sends for NAME; resolve -help)
       clusterdns migrate kube-dns|coredns FILE   (from kube-dns or CoreDNS; migrate -help)
       clusterdns top [--server HOST:PORT]   (live view of an insights listener; top --help)
  -conf FILE      Corefile to load (default: ./Corefile, else the built-in demo)
  -validate       check the Corefile and every file it names, then exit (0: valid, 1: not);
                  no port is opened and no API asked. -conf may be a ConfigMap (or - for stdin),
                  and be given again for ConfigMaps mounted beside it (coredns-custom)
  -dns.port N     port for server blocks that name none (default 53)
  -reuseport      share the DNS port with other clusterdns processes (one core each)
  -workers N      threads answering DNS, each with UDP sockets of its own on every DNS port
                  (SO_REUSEPORT) and its own copy of the cluster, fed by one API watch; auto:
                  the container's CPU quota (default: multisocket in the Corefile, else 1)
  -udp.engine E   batched (recvmmsg/sendmmsg, the default where built) or dgram (Node's own)
  -memory.budget N  MiB of resident memory to stay under by dropping cached answers and refusing
                  large replies (0: none; default 3/4 of the container's memory limit)
  -plugins        list the plugins this build has
  -version        print the version
`;
