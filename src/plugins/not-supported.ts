// The plugins of CoreDNS that clusterdns does not have. A Corefile written for CoreDNS may name any of
// them: naming one stops start-up with a message that says so and points to docs/compatibility.md,
// which says why, instead of "Unknown directive". The list is the compatibility data's
// (src/compat/coredns.ts); a plugin added to the registry (index.ts) gets its verdict changed there.
export { MISSING_PLUGINS as NOT_SUPPORTED } from "../compat/coredns.ts";
