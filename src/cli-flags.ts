// Command-line flags in CoreDNS's spelling: `-conf FILE`, `--conf FILE` and `-conf=FILE` all work.

export interface Flags {
  conf?: string;
  dnsPort?: number;
  version: boolean;
  plugins: boolean;
  reusePort: boolean;
  help: boolean;
}

export class FlagError extends Error {
  readonly code = "CDNS_ERR_FLAG";
}

const valued = new Set(["conf", "dns.port"]);
const boolean = new Set(["version", "plugins", "reuseport", "help", "h"]);

export function parseFlags(argv: string[]): Flags {
  const f: Flags = { version: false, plugins: false, reusePort: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--?([a-z.]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new FlagError(`unexpected argument '${arg}'`);
    const [, name, inline] = m;
    if (boolean.has(name)) {
      if (inline !== undefined) throw new FlagError(`flag -${name} takes no value`);
      if (name === "version") f.version = true;
      else if (name === "plugins") f.plugins = true;
      else if (name === "reuseport") f.reusePort = true;
      else f.help = true;
      continue;
    }
    if (!valued.has(name)) throw new FlagError(`unknown flag '${arg}' (see -help)`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new FlagError(`flag -${name} needs a value`);
    if (name === "conf") f.conf = value;
    else {
      if (!/^\d+$/.test(value) || Number(value) > 65535)
        throw new FlagError(`-dns.port: '${value}' is not a port`);
      f.dnsPort = Number(value);
    }
  }
  return f;
}

export const USAGE = `Usage: clusterdns [flags]
       clusterdns resolve NAME [flags]   (what a pod's resolver sends for NAME; resolve -help)
  -conf FILE      Corefile to load (default: ./Corefile, else the built-in demo)
  -dns.port N     port for server blocks that name none (default 53)
  -reuseport      share the DNS port with other clusterdns processes (one core each)
  -plugins        list the plugins this build has
  -version        print the version
`;
