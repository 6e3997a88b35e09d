// DNS over TLS in front of a plain DNS server (RFC 7858): a node:tls server on 127.0.0.1 that ends
// TLS and passes each connection's bytes, unchanged, to a TCP connection to the server behind (Knot):
// DoT frames its messages as TCP does, so the server behind answers them as it answers TCP. Its
// certificates come from a throwaway CA made with openssl at start.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Pki {
  dir: string;
  /** Paths of PEM files: the CA, the server's certificate and key (for dns.test and 127.0.0.1), and a
   * client certificate and key the CA signed. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export interface TlsFront {
  port: number;
  /** TLS connections accepted (handshakes done), and how many of them resumed a session. */
  connections: number;
  resumed: number;
  /** With `record`: the bytes each connection's client sent, decrypted, in order. */
  received: Buffer[][];
  close(): Promise<void>;
}

export interface TlsFrontOptions {
  clientAuth?: boolean;
  /** ALPN protocols offered ("h2" in front of a cleartext HTTP/2 server). */
  alpn?: string[];
  /** Keep what clients send (TlsFront.received). */
  record?: boolean;
}

/** A CA and the certificates it signed, in a new temporary folder. */
export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-pki-"));
  const p = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...key,
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    "-subj",
    "/CN=test-ca",
    "-days",
    "2",
  );
  const sign = (name: string, cn: string, ext: string) => {
    writeFileSync(p(`${name}.ext`), ext);
    openssl("req", ...key, "-keyout", p(`${name}.key`), "-out", p(`${name}.csr`), "-subj", `/CN=${cn}`);
    openssl(
      "x509",
      "-req",
      "-in",
      p(`${name}.csr`),
      "-CA",
      p("ca.crt"),
      "-CAkey",
      p("ca.key"),
      "-CAcreateserial",
      "-out",
      p(`${name}.crt`),
      "-days",
      "2",
      "-extfile",
      p(`${name}.ext`),
    );
  };
  sign("server", "dns.test", "subjectAltName=DNS:dns.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  sign("client", "client.test", "extendedKeyUsage=clientAuth\n");
  return {
    dir,
    ca: p("ca.crt"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    clientCert: p("client.crt"),
    clientKey: p("client.key"),
  };
}

/** Starts the TLS front for the DNS server on 127.0.0.1:`backendPort`; with `clientAuth`, it takes
 * only clients with a certificate the CA signed. */
export async function startTlsFront(
  pki: Pki,
  backendPort: number,
  o: TlsFrontOptions = {},
): Promise<TlsFront> {
  const { clientAuth = false, alpn, record = false } = o;
  const sockets = new Set<net.Socket>();
  const front: TlsFront = {
    port: 0,
    connections: 0,
    resumed: 0,
    received: [],
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = tls.createServer(
    {
      cert: readFileSync(pki.serverCert),
      key: readFileSync(pki.serverKey),
      ca: readFileSync(pki.ca),
      requestCert: clientAuth,
      rejectUnauthorized: clientAuth,
      ...(alpn ? { ALPNProtocols: alpn } : {}),
    },
    (client) => {
      front.connections++;
      if (client.isSessionReused()) front.resumed++;
      const backend = net.connect({ host: "127.0.0.1", port: backendPort });
      if (record) {
        const chunks: Buffer[] = [];
        front.received.push(chunks);
        client.on("data", (d: Buffer) => chunks.push(d));
      }
      for (const s of [client, backend]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(backend).pipe(client);
      client.on("close", () => backend.destroy());
      backend.on("close", () => client.destroy());
    },
  );
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  front.port = (server.address() as net.AddressInfo).port;
  return front;
}
