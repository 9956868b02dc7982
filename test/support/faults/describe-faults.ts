import { describe, it } from "vitest";

/**
 * `describe` for fault suites that need something of the machine (root, the mount syscall, a loop device, FUSE):
 * runs them, or skips them LOUDLY (a console line with the reason, and vitest's skip), never passes them silently.
 * Under CI=true with AUTOSCAN_REQUIRE_FAULTS=1 a missing capability fails instead.
 */
export type Capability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export function describeFaults(name: string, capability: Capability, options: { concurrent?: boolean }, body: () => void): void {
  if (capability.ok) {
    if (options.concurrent) describe.concurrent(name, body);
    else describe(name, body);
    return;
  }
  if (process.env.CI === "true" && process.env.AUTOSCAN_REQUIRE_FAULTS === "1") {
    describe(name, () => {
      it("needs the machine's fault-injection capabilities (CI=true, AUTOSCAN_REQUIRE_FAULTS=1)", () => {
        throw new Error(`fault tests are required here but ${capability.reason}`);
      });
    });
    return;
  }
  console.warn(`\n*** SKIPPED fault tests "${name}": ${capability.reason} ***\n`);
  describe.skip(`${name} [SKIPPED: ${capability.reason}]`, body);
}
