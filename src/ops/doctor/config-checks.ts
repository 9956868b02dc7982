import { fail, ok, warn, type CheckResult, type CheckFamily } from "./check.ts";

/**
 * The config, as `autoscan config check` sees it: every problem (each its own line, each already saying what was
 * expected), and the warnings that do not stop the service. The loader has already done the work; this only reports.
 */
export type ConfigOutcome =
  | { readonly kind: "loaded"; readonly path: string; readonly warnings: readonly string[] }
  | {
      readonly kind: "failed";
      readonly path: string;
      readonly message: string;
      readonly problems: readonly string[];
      /** When the loader's message itself is the finding (no file, unreadable file), what to do. */
      readonly fix?: string;
    };

export function configFamily(outcome: ConfigOutcome): CheckFamily {
  return { name: "config", run: async () => configChecks(outcome) };
}

function configChecks(outcome: ConfigOutcome): CheckResult[] {
  if (outcome.kind === "failed") {
    if (outcome.fix !== undefined || outcome.problems.length === 0) {
      return [fail("config", "Config", outcome.message, outcome.fix ?? `Edit ${outcome.path}.`)];
    }
    const fix = `Edit ${outcome.path}; 'autoscan config check' shows the same list.`;
    return outcome.problems.map((problem, i) => fail(`config.problem.${i + 1}`, "Config", problem, fix));
  }
  return [
    ok("config", "Config", `${outcome.path} is valid.`),
    ...outcome.warnings.map((warning, i) => warn(`config.warning.${i + 1}`, "Config", warning, `Edit ${outcome.path}.`)),
  ];
}
