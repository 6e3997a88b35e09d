// dnstap's `extra` with metadata placeholders: which placeholders are taken, and the envelope a message
// about one query carries (its field 3 holds the labels' values for that query).

import { test } from "node:test";
import assert from "node:assert/strict";
import type { MetaLabel } from "../metadata/labels.ts";
import { headFor, unsupportedPlaceholder } from "./extra.ts";
import { envelopeHead } from "./protobuf.ts";

test("extra: only {/LABEL} placeholders are taken", () => {
  assert.equal(unsupportedPlaceholder("plain"), undefined);
  assert.equal(unsupportedPlaceholder("ns={/kubernetes/client-namespace} v={/view/name}"), undefined);
  assert.equal(unsupportedPlaceholder("t={type}"), "{type}");
  assert.equal(unsupportedPlaceholder("{/kubernetes}"), "{/kubernetes}");
});

test("extra: each message's envelope holds the labels' values for its query, '-' for none", () => {
  const labels: Record<string, MetaLabel> = {
    "kubernetes/namespace": { perClient: false, value: (q) => q.qname.split(".")[1] },
    "kubernetes/client-pod-name": { perClient: true, value: () => undefined },
  };
  const head = {
    identity: "id",
    version: "v",
    extra: "ns={/kubernetes/namespace} pod={/kubernetes/client-pod-name}!",
  };
  const of = headFor(head, (l) => labels[l]);
  const q = { qname: "web.shop.svc.cluster.local.", qtype: 1, remoteAddress: "10.0.0.9" };
  assert.deepEqual(of(q), envelopeHead("id", "v", "ns=shop pod=-!"));
  // A block without metadata: every placeholder is '-'.
  assert.deepEqual(headFor(head, undefined)(q), envelopeHead("id", "v", "ns=- pod=-!"));
});
