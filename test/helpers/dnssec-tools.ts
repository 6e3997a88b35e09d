// BIND's DNSSEC tools for tests: keys made by dnssec-keygen, delv validating with a key as its trust
// anchor, and a UDP relay that breaks one signature of every reply.

import { execFile, execFileSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { decode } from "../../src/dns/decode.ts";
import { encode } from "../../src/dns/encode.ts";

const run = promisify(execFile);

/** Makes a key pair with dnssec-keygen in `dir`; returns its base name. */
export function keygen(dir: string, zone: string, alg: string, ksk = false): string {
  const args = ["-q", "-K", dir, "-a", alg, ...(ksk ? ["-f", "KSK"] : []), zone];
  return join(dir, execFileSync("dnssec-keygen", args, { encoding: "utf8" }).trim());
}

/** The DNSKEY record of a .key file, as one line. */
export const dnskeyLine = (base: string) =>
  readFileSync(`${base}.key`, "utf8")
    .split("\n")
    .filter((l) => l.length > 0 && !l.startsWith(";"))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();

/** delv's trust-anchors clause for `base`'s key. */
export function anchorFile(dir: string, base: string): string {
  const tokens = dnskeyLine(base).split(" ");
  const owner = tokens[0];
  const [flags, proto, alg, ...key] = tokens.slice(tokens.indexOf("DNSKEY") + 1);
  const file = join(dir, `${owner}anchor`);
  writeFileSync(file, `trust-anchors { ${owner} static-key ${flags} ${proto} ${alg} "${key.join("")}"; };\n`);
  return file;
}

/** What delv says of `name type` asked at 127.0.0.1:port, validated from `anchor` for `zone`. */
export async function delv(
  anchor: string,
  zone: string,
  port: number,
  name: string,
  type: string,
): Promise<string> {
  const args = ["-a", anchor, `+root=${zone}`, "@127.0.0.1", "-p", String(port), name, type];
  const r = await run("delv", args, { timeout: 20_000 }).catch((e: { stdout: string; stderr: string }) => e);
  return `${r.stdout}${r.stderr}`;
}

/** A UDP relay to 127.0.0.1:to that flips the last octet of the first RRSIG of every reply. */
export async function tamperingRelay(to: number) {
  const sock = createSocket("udp4");
  const up = createSocket("udp4");
  const waiting = new Map<number, { port: number; address: string }>();
  sock.on("message", (m, rinfo) => {
    waiting.set(m.readUInt16BE(0), rinfo);
    up.send(m, to, "127.0.0.1");
  });
  up.on("message", (m) => {
    const client = waiting.get(m.readUInt16BE(0));
    if (!client) return;
    const msg = decode(m);
    const sig = [...msg.answer, ...msg.authority].find((rr) => rr.type === 46);
    if (sig && "raw" in sig.data) {
      const raw = Uint8Array.from(sig.data.raw);
      raw[raw.length - 1] ^= 0x01;
      sig.data = { type: 46, raw };
    }
    sock.send(sig ? encode(msg) : m, client.port, client.address);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  await new Promise<void>((r) => up.bind(0, "127.0.0.1", r));
  return {
    port: sock.address().port,
    close: () => {
      sock.close();
      up.close();
    },
  };
}
