// The TO arguments of forward: `IP`, `IP:PORT`, `[IPv6]:PORT`, the same behind `dns://`, `tls://`
// (DNS over TLS, port 853 by default) or `https://` (DNS over HTTPS at /dns-query, port 443 by
// default; a path is refused, as CoreDNS does), or the path of a resolv.conf-style file whose `nameserver`
// lines are the upstreams (CoreDNS's forms). Hostnames and the other encrypted transports are refused
// at start-up.

import { readFileSync } from "node:fs";
import { isIP, isIPv6 } from "node:net";
import { resolve } from "node:path";
import type { Token } from "../../corefile/types.ts";
import type { UpstreamAddress } from "./upstream.ts";
import { configError } from "../../corefile/errors.ts";

const DNS_PORT = 53;
/** RFC 7858 3.1. */
const DOT_PORT = 853;
const DOH_PORT = 443;

const NOT_SUPPORTED: Record<string, string> = {
  grpc: "DNS-over-gRPC",
  quic: "DNS-over-QUIC",
};

/** The upstreams one TO argument stands for. Relative file paths resolve against `root`. */
export function parseTo(t: Token, root: string, plugin: string): UpstreamAddress[] {
  let s = t.text;
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(s);
  const name = scheme?.[1].toLowerCase();
  if (scheme && name) {
    if (NOT_SUPPORTED[name]) {
      throw configError(
        t,
        plugin,
        `${NOT_SUPPORTED[name]} (${name}://) is not supported: use dns://, tls:// or https://` +
          (name === "grpc" ? "; DNS-over-gRPC upstreams are the grpc plugin's (grpc FROM TO...)" : ""),
      );
    }
    if (name !== "dns" && name !== "tls" && name !== "https")
      throw configError(t, plugin, `unknown protocol '${name}://' in '${s}'`);
    s = s.slice(scheme[0].length);
  }
  const tls = name === "tls";
  const https = name === "https";
  if (https && s.includes("/"))
    throw configError(t, plugin, `'${t.text}': no path in an https:// upstream (/dns-query is used)`);
  const addr = hostPort(s, tls ? DOT_PORT : https ? DOH_PORT : DNS_PORT);
  if (typeof addr === "string") throw configError(t, plugin, `'${t.text}': ${addr}`);
  if (addr) return [tls ? { ...addr, tls } : https ? { ...addr, https } : addr];
  if (scheme) throw configError(t, plugin, `'${t.text}' is not an IP address`);
  return fromFile(t, resolve(root, s), plugin);
}

/** `IP`, `IP:PORT` or `[IPv6]:PORT`; undefined when it is not an address, a string saying why when it
 * is one with a bad port. */
export function hostPort(s: string, defaultPort = DNS_PORT): UpstreamAddress | string | undefined {
  let host = s;
  let port = String(defaultPort);
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(s);
  if (bracket) {
    host = bracket[1];
    port = bracket[2] ?? port;
    if (!isIPv6(host)) return undefined;
  } else if (!isIP(s)) {
    const colon = s.lastIndexOf(":");
    if (colon < 0 || isIPv6(s.slice(0, colon)) || isIP(s.slice(0, colon)) !== 4) return undefined;
    host = s.slice(0, colon);
    port = s.slice(colon + 1);
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    return `port '${port}' is not a number in [1, 65535]`;
  }
  const to = isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port: Number(port), to };
}

/** The upstreams of a resolv.conf-style file: its `nameserver` lines, port 53. */
export function fromFile(t: Token, path: string, plugin: string): UpstreamAddress[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message;
    throw configError(
      t,
      plugin,
      `'${t.text}' is not an IP address nor a readable resolv.conf (${why}); hostnames are not supported`,
    );
  }
  const out: UpstreamAddress[] = [];
  for (const ns of nameservers(text)) {
    const addr = hostPort(ns);
    if (addr === undefined || typeof addr === "string") {
      throw configError(t, plugin, `${path}: nameserver '${ns}' is not an IP address`);
    }
    out.push(addr);
  }
  if (out.length === 0) throw configError(t, plugin, `${path}: no nameserver lines`);
  return out;
}

/** The addresses of a resolv.conf's `nameserver` lines, in order. */
export function nameservers(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const fields = line
      .replace(/[#;].*$/, "")
      .trim()
      .split(/\s+/);
    if (fields[0] === "nameserver" && fields.length >= 2) out.push(fields[1]);
  }
  return out;
}
