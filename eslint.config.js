import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "bench/out/**", "dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
      // More than five positional parameters: group what travels together in an options object, or
      // on the hot path a small state object kept and refilled (no object per call), so calls keep
      // their names (the style guide; issue 34).
      "max-params": ["error", 5],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or catches loses its rejection (an unhandled rejection
    // is logged far from its cause), and a promise where a callback's result is ignored (an event
    // handler, a forEach) runs unchecked.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        // node:test runs what test(), describe() and it() return itself.
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["test", "describe", "it", "suite"] },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    files: ["bin/clusterdns", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
  },
);
