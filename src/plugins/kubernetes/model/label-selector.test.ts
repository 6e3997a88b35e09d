import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SelectorError, parseLabelSelector } from "./label-selector.ts";

describe("label selectors: matching", () => {
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ["", {}, true],
    ["", undefined, true],
    ["a=b", { a: "b" }, true],
    ["a=b", undefined, false],
    ["a==b", { a: "c" }, false],
    ["a!=b", {}, true],
    ["a!=b", { a: "b" }, false],
    ["a!=b", { a: "c" }, true],
    ["a", { a: "" }, true],
    ["a", { b: "a" }, false],
    ["!a", { a: "x" }, false],
    ["!a", {}, true],
    ["environment in (staging, qa),application=nginx", { environment: "qa", application: "nginx" }, true],
    ["environment in (staging, qa),application=nginx", { environment: "prod", application: "nginx" }, false],
    ["environment in (staging, qa)", {}, false],
    ["tier notin (frontend)", {}, true],
    ["tier notin (frontend)", { tier: "frontend" }, false],
    ["tier notin (frontend, edge)", { tier: "backend" }, true],
    ["example.com/team = dns , x", { "example.com/team": "dns", x: "1" }, true],
    ["app.kubernetes.io/name=web", { "app.kubernetes.io/name": "web" }, true],
    ["a=", { a: "" }, true],
    ["a=", { a: "x" }, false],
    // An empty member of a set stands for the empty value.
    ["a in (,x)", { a: "" }, true],
    ["a in (,x)", {}, false],
    ["replicas>2", { replicas: "3" }, true],
    ["replicas<2", { replicas: "3" }, false],
    ["replicas>2", { replicas: "three" }, false],
    ["replicas>2", {}, false],
    // Every requirement must hold.
    ["a,!b,c!=d", { a: "1", c: "e" }, true],
    ["a,!b,c!=d", { a: "1", b: "2" }, false],
  ];
  for (const [text, labels, want] of cases) {
    it(`'${text}' ${want ? "matches" : "does not match"} ${JSON.stringify(labels)}`, () => {
      assert.equal(parseLabelSelector(text)(labels), want);
    });
  }
});

describe("label selectors: syntax errors", () => {
  const bad = [
    "a in b",
    "a in ()",
    "a notin ()",
    "a=b,",
    "a in (x),",
    ",a",
    "=b",
    "!",
    "a b",
    "a=b=c",
    "a=(",
    "a notin (x",
    "a in (x y)",
    "-a=b",
    "x/y/z=1",
    "a=-b",
    `a=${"v".repeat(64)}`,
    "a>x",
    "a>",
  ];
  for (const text of bad) {
    it(`rejects '${text}' with KUBE_ERR_SELECTOR`, () => {
      assert.throws(
        () => parseLabelSelector(text),
        (e: unknown) =>
          e instanceof SelectorError && e.code === "KUBE_ERR_SELECTOR" && e.message.includes(text),
      );
    });
  }
});
