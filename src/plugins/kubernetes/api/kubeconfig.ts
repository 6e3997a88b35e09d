// Where the Kubernetes API is and how to authenticate to it, resolved once at setup the way CoreDNS
// (client-go) does: `kubeconfig FILE [CONTEXT]`, else `endpoint URL` (+ `tls`), else in-cluster, else
// $KUBECONFIG or ~/.kube/config. Every file named is read here, so a missing or bad one stops
// start-up with a KubeError (CONFIG) instead of failing on the first request.
//
// The kubeconfig is parsed here, not by @kubernetes/client-node: loading that library costs ~90 MB of
// memory. Only users whose credentials come from a program (`exec`, `auth-provider`) need it; for
// them the connection names the file and context, and the HTTP client loads the library on first use.

import { X509Certificate, createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { parse } from "yaml";
import { KubeError, KubeErrorCode } from "./api.ts";
import type { ClientOptions } from "./api.ts";

/** Everything needed to reach the API and authenticate, with files already read. */
export interface KubeConnection {
  /** The API server URL without a trailing slash; it may carry a path prefix. */
  server: string;
  /** Where the settings came from, for messages: `kubeconfig FILE (context C)`, `endpoint`, `in-cluster`. */
  source: string;
  tls: {
    /** PEM bundle of the CAs to trust; the system's CAs when absent. */
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    /** insecure-skip-tls-verify: do not check the server's certificate. */
    insecure: boolean;
    /** tls-server-name: the name to check the server's certificate against (and send in SNI). */
    serverName?: string;
  };
  auth: KubeAuth;
}

export interface KubeAuth {
  /** Bearer token; with `tokenFile`, the file's content as read at load. */
  token?: string;
  /** Read again at most once a minute (in-cluster tokens are rotated, bound tokens expire); its last
   * good content wins over `token`, as in client-go. */
  tokenFile?: string;
  basic?: { username: string; password: string };
  /** Impersonation headers (`as`, `as-uid`, `as-groups`). */
  headers?: Record<string, string | string[]>;
  /** `exec` or `auth-provider`: credentials come from @kubernetes/client-node, loaded for this user
   * only, from the same file and context. */
  plugin?: { kind: "exec" | "auth-provider"; kubeconfig: string; context: string };
}

/** What the loader reads from its surroundings; tests replace it. */
export interface LoadEnv {
  /** Default process.env: KUBERNETES_SERVICE_HOST/PORT, KUBECONFIG. */
  env?: Record<string, string | undefined>;
  /** Default os.homedir(), for ~/.kube/config. */
  home?: string;
  /** Default /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt). */
  serviceAccountDir?: string;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

function configError(message: string, cause?: unknown): KubeError {
  return new KubeError(KubeErrorCode.CONFIG, message, { cause });
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Resolves the connection for these options (see the file comment for the order). Throws a
 * KubeError (CONFIG) when the settings are unusable. */
export function loadKubeConfig(o: ClientOptions, e: LoadEnv = {}): KubeConnection {
  if (o.kubeconfig !== undefined) return fromKubeconfig(o.kubeconfig, o.context);
  if (o.endpoint !== undefined) return fromEndpoint(o.endpoint, o.tls);
  const env = e.env ?? process.env;
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    return inCluster(env.KUBERNETES_SERVICE_HOST, env.KUBERNETES_SERVICE_PORT, e.serviceAccountDir);
  }
  // client-go merges every file of a $KUBECONFIG list; the first one is enough for a DNS server, and
  // the message below says so when it is missing.
  const listed = (env.KUBECONFIG ?? "").split(delimiter).find((p) => p !== "");
  if (listed !== undefined) {
    return fromKubeconfig(listed, undefined, "$KUBECONFIG (only its first file is read)");
  }
  const home = e.home ?? homedir();
  return fromKubeconfig(
    join(home, ".kube", "config"),
    undefined,
    "not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset), no $KUBECONFIG, so the default",
    OUTSIDE_A_CLUSTER,
  );
}

/** What to do when nothing says where the API is: the two ways to run outside a cluster. */
const OUTSIDE_A_CLUSTER =
  "outside a cluster, name one with `kubeconfig FILE` in the kubernetes block, or serve Kubernetes objects from a file with `objects FILE` (kubectl get svc,endpointslices -A -o yaml)";

// --- endpoint and in-cluster -----------------------------------------------------------------------

function serverUrl(raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw configError(`${what} ${JSON.stringify(raw)} is not a URL`, err);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw configError(`${what} ${raw}: scheme must be http or https`);
  }
  return raw.replace(/\/+$/, "");
}

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw configError(`${what}: cannot read ${path}: ${errText(err)}`, err);
  }
}

function fromEndpoint(endpoint: string, tls: ClientOptions["tls"]): KubeConnection {
  const server = serverUrl(endpoint, "endpoint");
  const conn: KubeConnection = { server, source: "endpoint", tls: { insecure: false }, auth: {} };
  if (tls) {
    conn.tls.cert = certificate(readFile(tls.cert, "tls"), `tls: ${tls.cert}`);
    conn.tls.key = privateKey(readFile(tls.key, "tls"), `tls: ${tls.key}`);
    conn.tls.ca = certificate(readFile(tls.ca, "tls"), `tls: ${tls.ca}`);
  }
  return conn;
}

function inCluster(host: string, port: string, dir = SERVICE_ACCOUNT_DIR): KubeConnection {
  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const server = serverUrl(`https://${hostPart}:${port}`, "in-cluster API address");
  const tokenFile = join(dir, "token");
  const token = readFile(tokenFile, "in-cluster service account token").toString("utf8").trim();
  if (token === "") throw configError(`in-cluster service account token: ${tokenFile} is empty`);
  const caFile = join(dir, "ca.crt");
  const ca = certificate(readFile(caFile, "in-cluster CA"), `in-cluster CA ${caFile}`);
  return { server, source: "in-cluster", tls: { ca, insecure: false }, auth: { token, tokenFile } };
}

// --- PEM checks ------------------------------------------------------------------------------------

function certificate(pem: Buffer, what: string): Buffer {
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw configError(`${what} is not a PEM certificate: ${errText(err)}`, err);
  }
  return pem;
}

function privateKey(pem: Buffer, what: string): Buffer {
  try {
    createPrivateKey(pem);
  } catch (err) {
    throw configError(`${what} is not a PEM private key: ${errText(err)}`, err);
  }
  return pem;
}

// --- kubeconfig files ------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Typed reads of one mapping of the file, with the mapping's place in messages. */
class Fields {
  readonly obj: Obj;
  readonly where: string;
  constructor(obj: Obj, where: string) {
    this.obj = obj;
    this.where = where;
  }
  has(key: string): boolean {
    return this.obj[key] !== undefined && this.obj[key] !== null;
  }
  #bad(key: string, want: string): KubeError {
    return configError(`${this.where}: ${key} must be ${want}`);
  }
  str(key: string): string | undefined {
    const v = this.obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw this.#bad(key, "a string");
    return v;
  }
  bool(key: string): boolean {
    const v = this.obj[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== "boolean") throw this.#bad(key, "true or false");
    return v;
  }
  strings(key: string): string[] | undefined {
    const v = this.obj[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((s) => typeof s === "string"))
      throw this.#bad(key, "a list of strings");
    return v as string[];
  }
}

/** The entry `name` of a named list (clusters, users, contexts): its inner mapping. */
function entry(doc: Fields, list: string, inner: string, name: string): Fields | undefined {
  const items = doc.obj[list] ?? [];
  if (!Array.isArray(items)) throw configError(`${list} must be a list`);
  for (const item of items) {
    if (isObj(item) && item.name === name) {
      const body = item[inner] ?? {};
      const where = `${list.slice(0, -1)} "${name}"`;
      if (!isObj(body)) throw configError(`${where}: ${inner} must be a mapping`);
      return new Fields(body, where);
    }
  }
  return undefined;
}

function fromKubeconfig(
  file: string,
  context: string | undefined,
  why?: string,
  hint?: string,
): KubeConnection {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const prefix = why ? `${why} kubeconfig` : "kubeconfig";
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    const what = missing ? `${file} does not exist` : `cannot read ${file}: ${errText(err)}`;
    throw configError(`${prefix}: ${what}${missing && hint ? `; ${hint}` : ""}`, err);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    // The parser's message ends in a multi-line excerpt of the file; its first line says where.
    throw configError(`kubeconfig ${file} is not valid YAML: ${errText(err).split("\n")[0]}`, err);
  }
  if (!isObj(doc)) throw configError(`kubeconfig ${file}: not a kubeconfig (expected a mapping)`);
  try {
    return resolveContext(new Fields(doc, "top level"), file, context);
  } catch (err) {
    if (err instanceof KubeError) throw configError(`${err.message} (in ${file})`, err.cause);
    throw err;
  }
}

function resolveContext(doc: Fields, file: string, wanted: string | undefined): KubeConnection {
  const dir = dirname(file);
  const path = (p: string) => resolve(dir, p);
  const name = wanted ?? doc.str("current-context");
  if (!name) throw configError("no current-context set and no context given");
  const ctx = entry(doc, "contexts", "context", name);
  if (!ctx) throw configError(`context "${name}" not found`);
  const { server, tls } = clusterOf(doc, ctx, name, path);
  const conn: KubeConnection = { server, source: `kubeconfig ${file} (context ${name})`, tls, auth: {} };

  const userName = ctx.str("user");
  if (!userName) return conn;
  const user = entry(doc, "users", "user", userName);
  if (!user) throw configError(`user "${userName}" (of context "${name}") not found`);
  clientCertificate(user, path, conn.tls);
  login(user, path, conn.auth);
  const headers = impersonation(user);
  if (headers) conn.auth.headers = headers;
  const exec = user.has("exec");
  const provider = user.has("auth-provider");
  if (exec && provider) throw configError(`${user.where}: exec and auth-provider cannot both be set`);
  if (exec || provider) {
    conn.auth.plugin = { kind: exec ? "exec" : "auth-provider", kubeconfig: file, context: name };
  }
  return conn;
}

/** The server and TLS settings of the cluster context `name` names. */
function clusterOf(
  doc: Fields,
  ctx: Fields,
  name: string,
  path: (p: string) => string,
): Pick<KubeConnection, "server" | "tls"> {
  const clusterName = ctx.str("cluster");
  if (!clusterName) throw configError(`context "${name}" names no cluster`);
  const cluster = entry(doc, "clusters", "cluster", clusterName);
  if (!cluster) throw configError(`cluster "${clusterName}" (of context "${name}") not found`);
  const rawServer = cluster.str("server");
  if (!rawServer) throw configError(`cluster "${clusterName}" has no server`);
  const server = serverUrl(rawServer, `cluster "${clusterName}": server`);
  if (cluster.has("proxy-url")) {
    throw configError(`cluster "${clusterName}": proxy-url is not supported; reach the API directly`);
  }
  const tls: KubeConnection["tls"] = {
    insecure: cluster.bool("insecure-skip-tls-verify"),
    serverName: cluster.str("tls-server-name"),
  };
  const ca = pem(cluster, "certificate-authority", path);
  if (ca) {
    if (tls.insecure && server.startsWith("https:")) {
      throw configError(
        `cluster "${clusterName}": certificate-authority and insecure-skip-tls-verify contradict each other`,
      );
    }
    tls.ca = certificate(ca.pem, ca.what);
  }
  return { server, tls };
}

/** A user's client certificate and key, both or neither, into `tls`. */
function clientCertificate(user: Fields, path: (p: string) => string, tls: KubeConnection["tls"]): void {
  const cert = pem(user, "client-certificate", path);
  const key = pem(user, "client-key", path);
  if (!cert !== !key) {
    throw configError(`${user.where}: client-certificate and client-key go together; only one is set`);
  }
  if (cert && key) {
    tls.cert = certificate(cert.pem, cert.what);
    tls.key = privateKey(key.pem, key.what);
  }
}

/** A user's token (or token file) or username and password, into `auth`. */
function login(user: Fields, path: (p: string) => string, auth: KubeAuth): void {
  const token = user.str("token");
  const tokenFile = user.str("tokenFile");
  const username = user.str("username");
  const password = user.str("password");
  if ((token || tokenFile) && (username !== undefined || password !== undefined)) {
    throw configError(`${user.where}: a token and username/password are two ways to log in; use one`);
  }
  if (tokenFile) {
    auth.tokenFile = path(tokenFile);
    auth.token = readFile(auth.tokenFile, `${user.where}: tokenFile`).toString("utf8").trim();
  } else if (token) auth.token = token;
  if (username !== undefined || password !== undefined) {
    auth.basic = { username: username ?? "", password: password ?? "" };
  }
}

/** A user's impersonation headers (`as`, `as-uid`, `as-groups`), undefined without any. */
function impersonation(user: Fields): Record<string, string | string[]> | undefined {
  const headers: Record<string, string | string[]> = {};
  const as = user.str("as");
  const uid = user.str("as-uid");
  const groups = user.strings("as-groups");
  if (as) headers["Impersonate-User"] = as;
  if (uid) headers["Impersonate-Uid"] = uid;
  if (groups?.length) headers["Impersonate-Group"] = groups;
  if (user.has("as-user-extra")) throw configError(`${user.where}: as-user-extra is not supported`);
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/** `KEY` (a file, relative to the kubeconfig's folder) or `KEY-data` (base64), never both. */
function pem(f: Fields, key: string, path: (p: string) => string): { pem: Buffer; what: string } | undefined {
  const file = f.str(key);
  const data = f.str(`${key}-data`);
  if (file && data) throw configError(`${f.where}: ${key} and ${key}-data are both set; use one`);
  if (file) {
    const p = path(file);
    return { pem: readFile(p, `${f.where}: ${key}`), what: `${f.where}: ${key} ${p}` };
  }
  if (data) return { pem: Buffer.from(data, "base64"), what: `${f.where}: ${key}-data` };
  return undefined;
}
