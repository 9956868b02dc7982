import { createRequire, syncBuiltinESMExports } from "node:module";
import { afterAll } from "vitest";

/**
 * Set up for `npm run test:unit` only (vitest.unit.config.ts): a unit test starts no child process. Each way of
 * starting one is wrapped to note the command (and then start it as asked), and a file that started any fails once
 * its tests are done, saying how to mark it; `syncBuiltinESMExports` carries the wrappers to `import … from
 * "node:child_process"` in the code under test.
 */
const childProcess = createRequire(import.meta.url)("node:child_process") as Record<string, unknown>;
const started: string[] = [];
for (const name of ["spawn", "spawnSync", "fork", "exec", "execSync", "execFile", "execFileSync"]) {
  const original = childProcess[name] as (...args: unknown[]) => unknown;
  childProcess[name] = function (this: unknown, ...args: unknown[]) {
    started.push(`${name} ${String(args[0])}`);
    return original.apply(this, args);
  };
}
syncBuiltinESMExports();

afterAll(() => {
  if (started.length === 0) return;
  throw new Error(
    `This file started ${started.length} child process(es) (${[...new Set(started)].slice(0, 3).join("; ")}): it is not a unit test. ` +
      "Mark it with a `// @module-tag process` line at its top, and npm run test:unit leaves it to npm test.",
  );
});
