// `npm run bench`: runs every benchmark script in turn and prints their figures. Each script is also runnable alone
// (`node bench/<name>.ts`). Run on an otherwise idle machine; figures vary with load.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const scripts = ["queue.ts", "webhook.ts", "service.ts", "start.ts", "console.ts", "backfill.ts", "library-db.ts", "drive.ts", "docker-exec.ts", "postgres.ts", "walk.ts", "watch.ts", "landed-large-answer.ts", "import-damaged.ts", "hung-mount.ts", "guessing.ts", "fastpath.ts", "refresh.ts"];
const only = process.argv.slice(2);
let failed = 0;
for (const script of scripts) {
  if (only.length && !only.some((name) => script.startsWith(name))) continue;
  const path = join(here, script);
  if (!existsSync(path)) continue;
  console.log(`\n=== bench/${script}`);
  const result = spawnSync(process.execPath, [path], { stdio: "inherit" });
  if (result.status !== 0) {
    failed += 1;
    console.log(`bench/${script} exited with ${result.status ?? result.signal}`);
  }
}
process.exitCode = failed ? 1 : 0;
