// TLS for the tls:// and https:// listeners, from a block's `tls` settings (src/plugins/tls): the
// options of node:tls, CoreDNS's client_auth policies, and the key log.
//
// client_auth maps onto node:tls as follows. OpenSSL itself refuses a handshake without a certificate
// when rejectUnauthorized is on (require_and_verify); the two policies between "ask" and "require a
// valid one" are checked once the handshake is done (clientAllowed), where Node has verified the
// chain (TLSSocket.authorized) without acting on it:
//   nocert              no certificate asked for
//   request             asked for, none required, none checked
//   require             one required, not checked
//   verify_if_given     none required; one given must chain to the CA
//   require_and_verify  one required, and it must chain to the CA

import { createWriteStream } from "node:fs";
import type { Logger } from "pino";
import tls from "node:tls";
import type { TlsSettings } from "../setup/block.ts";
import type { Token, Transport } from "../corefile/types.ts";
import type { Block } from "./block.ts";

/** node:tls server options for the settings; `alpn` names the protocols offered (ALPN). */
export function tlsOptions(s: TlsSettings, alpn?: string[]): tls.TlsOptions {
  return {
    cert: s.cert,
    key: s.key,
    ca: s.ca,
    // CoreDNS's floor: TLS 1.2.
    minVersion: "TLSv1.2",
    requestCert: s.clientAuth !== "nocert",
    rejectUnauthorized: s.clientAuth === "require_and_verify",
    ALPNProtocols: alpn,
  };
}

/** Whether a client that finished its handshake passes the block's client_auth policy. */
export function clientAllowed(s: TlsSettings, socket: tls.TLSSocket): boolean {
  if (s.clientAuth !== "require" && s.clientAuth !== "verify_if_given") return true;
  const given = Object.keys(socket.getPeerCertificate()).length > 0;
  if (s.clientAuth === "require") return given;
  return !given || socket.authorized;
}

/** The key log each server writes, so that a reload can stop or move it. */
const keyLogs = new WeakMap<tls.Server, { path: string; stop: () => void }>();

/** Writes the server's TLS secrets to `keylog` (NSS key log format) when the settings ask for it, and
 * only then: called again (a reload), a key log the settings no longer name is closed. */
export function keyLog(server: tls.Server, s: TlsSettings, log: Logger): void {
  const was = keyLogs.get(server);
  if (was?.path === s.keylog) return;
  was?.stop();
  keyLogs.delete(server);
  if (s.keylog === undefined) return;
  const out = createWriteStream(s.keylog, { flags: "a", mode: 0o600 });
  out.on("error", (err) => log.error({ err, keylog: s.keylog }, "tls: cannot write the key log"));
  const write = (line: Buffer) => out.write(line);
  const stop = () => {
    server.off("keylog", write);
    out.end();
  };
  server.on("keylog", write);
  server.once("close", stop);
  keyLogs.set(server, { path: s.keylog, stop });
}

/** A reload's settings on a listening server: the certificate and CA, client_auth and the key log for
 * the handshakes from now on. setSecureContext takes the certificate and CA alone: whether a client
 * certificate is asked for and required are the server's own fields. */
export function retls(server: tls.Server, s: TlsSettings, alpn: string[], log: Logger): void {
  const o = tlsOptions(s, alpn);
  server.setSecureContext(o);
  Object.assign(server, { requestCert: o.requestCert, rejectUnauthorized: o.rejectUnauthorized });
  keyLog(server, s, log);
}

/** The TCP socket a TLS socket runs over: what the kernel's send queue is read from (send-queue.ts),
 * and what is counted while the handshake runs. Node keeps it as `_parent`. */
export function rawSocketOf(socket: tls.TLSSocket): import("node:net").Socket | undefined {
  return (socket as unknown as { _parent?: import("node:net").Socket | null })._parent ?? undefined;
}

/** What a reload's check reads of a listener group. */
interface Secured {
  tls?: TlsSettings;
  transport: string;
  doh: unknown[];
  pipeline: { label: string };
}

/** Throws when a reload would add or remove `tls` on a listening https:// or grpc:// block (`prev`):
 * its server is a plain or a TLS one from its start. A tls:// listener runs its handshakes itself, so
 * it can. */
export function tlsKept(prev: Secured | undefined, next: Secured): void {
  if (prev === undefined || prev.doh.length === 0 || (prev.tls === undefined) === (next.tls === undefined))
    return;
  const change = next.tls === undefined ? "remove" : "add";
  throw new Error(
    `${next.pipeline.label}: a reload cannot ${change} tls on a listening ${next.transport}:// block: restart clusterdns to apply it`,
  );
}

/** What a listener without a certificate serves, by transport, as CoreDNS does. */
const CLEARTEXT: Partial<Record<Transport, string>> = {
  tls: "DNS is served over plain TCP",
  https: "DoH is served over plain HTTP/1.1",
  grpc: "gRPC is served over cleartext HTTP/2",
};

/** A listener group's certificate from the `tls` of a block it serves (the first given); a line says
 * what the block's key does without one, or with one it cannot use. */
export function secureGroup(
  g: { transport: Transport; tls?: TlsSettings },
  block: Block,
  key: Token,
  log: Logger,
): void {
  const at = `${key.file}:${key.line}`;
  if (block.tls === undefined) {
    const clear = CLEARTEXT[g.transport];
    if (clear !== undefined) log.warn({ at }, `${key.text}: no tls directive, so ${clear} (as CoreDNS)`);
  } else if (g.transport === "dns") {
    log.warn({ at, tls: block.tls.at }, `${key.text}: tls has no effect on a dns:// server block`);
  } else if (g.tls === undefined) {
    g.tls = block.tls;
  } else if (g.tls !== block.tls) {
    log.warn(
      { at, used: g.tls.at, ignored: block.tls.at },
      `${key.text}: one certificate per listener: the first tls given is used`,
    );
  }
}
