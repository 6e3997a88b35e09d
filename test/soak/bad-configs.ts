// Bad input for the control plane: Corefiles, zone files, kubeconfigs, objects files, hosts files and
// listen addresses that cannot be used. Each case is a Corefile (with the files it names) and what the
// one line clusterdns prints about it must say. `PORT` in a Corefile is replaced by a port that is in
// use (held by the test), `DIR` by the folder the files are written to.

export interface BadConfig {
  what: string;
  corefile: string;
  files?: Record<string, string | Buffer>;
  /** What the one line says (after "clusterdns: " at start-up; the `error` field on a reload). */
  says: RegExp;
  /** Needs PORT held by another socket. */
  portInUse?: boolean;
}

const OBJECTS_OK = `apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec: { clusterIP: 10.96.0.5, ports: [{ name: http, port: 80, protocol: TCP }] }
`;

const ZONE_OK = `$ORIGIN example.org.
$TTL 300
@ SOA ns hostmaster 1 7200 900 1209600 300
@ NS ns
ns A 192.0.2.1
`;

/** A block for zone files: `file` on DIR/db. */
const fileBlock = (zone: string) => ({
  corefile: "example.org {\n    file DIR/db\n}\n",
  files: { db: zone },
});

/** A block for objects files: `kubernetes` reading DIR/objects.yaml. */
const objectsBlock = (objects: string) => ({
  corefile: "cluster.local {\n    kubernetes cluster.local {\n        objects DIR/objects.yaml\n    }\n}\n",
  files: { "objects.yaml": objects },
});

/** A block for kubeconfigs: `kubernetes` with DIR/kubeconfig. */
const kubeconfigBlock = (kubeconfig: string) => ({
  corefile: "cluster.local {\n    kubernetes cluster.local {\n        kubeconfig DIR/kubeconfig\n    }\n}\n",
  files: { kubeconfig },
});

const KUBECONFIG_HEAD = `apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: { cluster: test, user: test }
users:
- name: test
  user: { token: abc }
`;

export const BAD_CONFIGS: BadConfig[] = [
  // Corefiles
  {
    what: "Corefile: a block never closed",
    corefile: ". {\n    whoami\n",
    says: /Corefile:1 .*'\{' is never closed/,
  },
  { what: "Corefile: a brace too many", corefile: ". {\n    whoami\n}\n}\n", says: /Corefile:4 /i },
  {
    what: "Corefile: an unknown directive",
    corefile: ". {\n    frobnicate\n}\n",
    says: /Corefile:2 .*Unknown directive 'frobnicate'/,
  },
  {
    what: "Corefile: a port out of range",
    corefile: ".:99999 {\n    whoami\n}\n",
    says: /Corefile:1 .*99999/,
  },
  {
    what: "Corefile: one zone and port twice",
    corefile: ". {\n    whoami\n}\n. {\n    whoami\n}\n",
    says: /Corefile:4 .*(twice|duplicate|already)/i,
  },
  { what: "Corefile: binary garbage", corefile: "\u0000\u0001\u00ff{{{\u0007}", says: /Corefile:1 / },
  {
    what: "Corefile: an environment variable that is not set",
    corefile: ". {\n    forward . {$CLUSTERDNS_SOAK_UNSET}\n}\n",
    says: /Corefile:2 .*forward/,
  },
  {
    what: "Corefile: an import of a missing file",
    corefile: ". {\n    import DIR/nothere\n}\n",
    says: /Corefile:2 .*nothere/,
  },
  {
    what: "Corefile: a file that imports itself",
    corefile: "import DIR/loop\n",
    files: { loop: "import DIR/loop\n" },
    says: /loop:1 .*(import|cycle|loop|nest)/i,
  },
  {
    what: "Corefile: a bad option value",
    corefile: "cluster.local {\n    kubernetes cluster.local {\n        ttl forever\n    }\n}\n",
    says: /Corefile:3 .*kubernetes/,
  },
  {
    what: "Corefile: 64 nested blocks",
    corefile: `. {\n${"    x {\n".repeat(64)}${"    }\n".repeat(64)}}\n`,
    says: /Corefile:\d+ /,
  },
  // Zone files
  {
    what: "zone file: missing",
    ...fileBlock(ZONE_OK),
    corefile: "example.org {\n    file DIR/nothere\n}\n",
    says: /nothere/,
  },
  {
    what: "zone file: a record that does not parse",
    ...fileBlock(`${ZONE_OK}www A 300.1.1.1\n`),
    says: /db:6: '300\.1\.1\.1' is not an IPv4 address/,
  },
  {
    what: "zone file: no SOA",
    ...fileBlock("$ORIGIN example.org.\nwww 300 A 192.0.2.1\n"),
    says: /db:\d* ?.*SOA/,
  },
  {
    what: "zone file: an unclosed parenthesis",
    ...fileBlock(`${ZONE_OK}www 300 TXT ( "a"\n`),
    says: /db:6: '\(' is never closed/,
  },
  {
    what: "zone file: binary",
    ...fileBlock("\u0000\u00ff\u00fe garbage \u0001\n"),
    says: /db:1: unknown record type/,
  },
  {
    what: "zone file: $INCLUDE of a file that is no zone",
    ...fileBlock(`${ZONE_OK}$INCLUDE /etc/passwd\n`),
    says: /file: \/etc\/passwd:1: /,
  },
  // Objects files
  {
    what: "objects file: missing",
    ...objectsBlock(OBJECTS_OK),
    corefile: "cluster.local {\n    kubernetes cluster.local {\n        objects DIR/nothere.yaml\n    }\n}\n",
    says: /nothere\.yaml/,
  },
  {
    what: "objects file: not YAML",
    ...objectsBlock("kind: Service\n  metadata: [\n"),
    says: /objects\.yaml:\d+/,
  },
  {
    what: "objects file: a Service without a name",
    ...objectsBlock("apiVersion: v1\nkind: Service\nmetadata: { namespace: default }\nspec: {}\n"),
    says: /objects\.yaml:\d+.*name/,
  },
  {
    what: "objects file: a cluster IP that is no address",
    ...objectsBlock(OBJECTS_OK.replace("10.96.0.5", "10.96.0.500")),
    says: /objects\.yaml:1: .*spec\.clusterIP '10\.96\.0\.500' is not an IP address/,
  },
  { what: "objects file: a list of numbers", ...objectsBlock("- 1\n- 2\n"), says: /objects\.yaml:\d+/ },
  // Kubeconfigs
  {
    what: "kubeconfig: missing",
    ...kubeconfigBlock(""),
    corefile: "cluster.local {\n    kubernetes cluster.local {\n        kubeconfig DIR/nothere\n    }\n}\n",
    says: /nothere/,
  },
  { what: "kubeconfig: not YAML", ...kubeconfigBlock("clusters: [\n"), says: /kubeconfig .*not valid YAML/ },
  { what: "kubeconfig: no cluster", ...kubeconfigBlock(KUBECONFIG_HEAD), says: /cluster "test".*not found/ },
  {
    what: "kubeconfig: a server that is no URL",
    ...kubeconfigBlock(`${KUBECONFIG_HEAD}clusters:\n- name: test\n  cluster: { server: "::not a url" }\n`),
    says: /not a URL/,
  },
  {
    what: "kubeconfig: a CA that is no certificate",
    ...kubeconfigBlock(
      `${KUBECONFIG_HEAD}clusters:\n- name: test\n  cluster: { server: "https://127.0.0.1:1", certificate-authority-data: bm90IGEgY2VydA== }\n`,
    ),
    says: /certificate/i,
  },
  // Hosts files (a missing one is no error: it may appear later, as in CoreDNS)
  {
    what: "hosts file: an option that does not exist",
    corefile: "example.org {\n    hosts DIR/h {\n        reload soon\n    }\n}\n",
    files: { h: "192.0.2.1 a.example.org\n" },
    says: /Corefile:3 .*hosts/,
  },
  // Listening
  {
    what: "listen: the port is in use",
    corefile: ".:PORT {\n    whoami\n}\n",
    says: /cannot listen.*PORT.*in use/,
    portInUse: true,
  },
  {
    what: "listen: an address this host does not have",
    corefile: ". {\n    bind 192.0.2.77\n    whoami\n}\n",
    says: /(cannot listen|bind).*192\.0\.2\.77/,
  },
  {
    what: "listen: health on a port in use",
    corefile: ". {\n    health 127.0.0.1:PORT\n    whoami\n}\n",
    says: /health.*PORT.*in use/,
    portInUse: true,
  },
];
