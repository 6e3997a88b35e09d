// The parts of the reliability suite, in the order `npm run soak` runs them: one file each under
// test/soak/, runnable alone (`node test/soak/FILE [--reduced]`), each with a PART.test.ts that runs
// its reduced version in `npm test`. A new part is one line here.

export interface PartEntry {
  /** What `npm run soak -- NAME` selects it by (the part's own name). */
  name: string;
  /** Its file, relative to test/soak/. */
  file: string;
}

export const PARTS: PartEntry[] = [
  { name: "fuzz", file: "fuzz.ts" },
  { name: "tcp-abuse", file: "tcp-abuse.ts" },
  { name: "tcp-flood", file: "tcp-flood.ts" },
  { name: "half-close", file: "half-close.ts" },
  { name: "rolling-restart", file: "rolling-restart.ts" },
  { name: "churn-memory", file: "churn-memory.ts" },
  { name: "control-plane", file: "control-plane.ts" },
  { name: "amplification", file: "amplification.ts" },
  { name: "k8s-faults", file: "k8s-faults.ts" },
  { name: "k8s-scale", file: "k8s-scale.ts" },
  { name: "watch-storm", file: "watch-storm.ts" },
  { name: "k8s-reload", file: "k8s-reload.ts" },
  { name: "node-local-restart", file: "node-local-restart.ts" },
  { name: "forward-spoof", file: "forward-spoof.ts" },
  { name: "costly-client", file: "costly-client.ts" },
];
