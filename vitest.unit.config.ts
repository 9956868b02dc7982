import { globSync, readFileSync } from "node:fs";
import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

/**
 * `npm run test:unit`: the fast part of `npm test`, for a contributor's edit-and-run loop (under a minute on 2 cores).
 *
 * The rule: every test beside the code (`src/**\/*.test.ts`) is a unit test, except a file that marks itself with a
 * `// @module-tag process` line (it starts a child process: the disk probe's helper, a shell, a scanner, `mount`) or
 * `// @module-tag realtime` (it sleeps on the real clock to let time pass). Those are left out before they load
 * (vitest's `--tags-filter` would still start a worker and import each one). `npm test` runs them, and the component
 * tests under `test/` (real servers, the CLI, Docker, Chromium, fault injection).
 * No PostgreSQL is started: suites that need it report SKIPPED with the reason (`npm test` runs them). A file that
 * starts a process without the mark fails here, naming the command (test/support/unit-guard.ts).
 */
const UNIT = "src/**/*.test.ts";
const root = import.meta.dirname;
const marked = globSync(UNIT, { cwd: root }).filter((file) => /@module-tag (process|realtime)\b/.test(readFileSync(`${root}/${file}`, "utf8")));

export default defineConfig({
  test: {
    ...base.test,
    include: [UNIT],
    exclude: [...configDefaults.exclude, ...marked],
    globalSetup: [],
    provide: {
      autoscanPostgres: { ok: false, reason: "npm run test:unit starts no PostgreSQL (npm test runs these suites)" },
    },
    setupFiles: ["test/support/unit-guard.ts"],
  },
});
