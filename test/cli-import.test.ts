import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createManualClock } from "./support/manual-clock.ts";
import { captureLog, makeTempDir } from "./support/capture-log.ts";
import { fixtureText } from "./support/config-fixtures.ts";
import { writePlexAutoscanQueue } from "./support/plex-autoscan-queue.ts";
import { runCli } from "./support/run-cli.ts";
import { createScanQueue } from "../src/queue/open-scan-queue.ts";

/** `autoscan import --from-plex-autoscan PATH [--dry-run]`, run as a user runs it. */
let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeEach(async () => {
  temp = await makeTempDir();
});
afterEach(() => temp.cleanup());

describe("autoscan import --from-plex-autoscan", () => {
  const paths = ["/tv/A/Season 01/A - S01E01.mkv", "/tv/A/Season 01/A - S01E02.mkv", "/tv/B/Season 02", "relative/path.mkv"];
  const config = (): string => join(temp.dir, "config", "config.json");
  const setup = async (): Promise<string> => {
    const file = join(temp.dir, "plex_autoscan.db");
    writePlexAutoscanQueue(file, paths);
    expect((await runCli(["config", "init", "--config", config()])).code).toBe(0);
    return file;
  };

  it("--dry-run says what would be imported, lists the paths it would bring, and stores nothing", async () => {
    const file = await setup();
    const result = await runCli(["import", "--from-plex-autoscan", file, "--dry-run", "--config", config(), "--data-dir", join(temp.dir, "data")]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `Would import 3 scan request(s) for 3 distinct path(s) from '${file}'; 1 row(s) skipped (not a full path). Nothing was stored (--dry-run).\n` +
        paths.slice(0, 3).map((path) => `  ${path}\n`).join(""),
    );
    expect(result.stderr).toBe("");
    expect(existsSync(join(temp.dir, "data", "queue.db"))).toBe(false);
  });

  it("--dry-run lists the first 20 paths and how many more; --dry-run --all lists every one, in the file's order", async () => {
    const file = join(temp.dir, "plex_autoscan.db");
    const many = Array.from({ length: 45 }, (_, i) => `/tv/Show ${String(i).padStart(2, "0")}/Season 01`);
    writePlexAutoscanQueue(file, many);
    const args = ["import", "--from-plex-autoscan", file, "--dry-run", "--config", config()];
    const [first, all] = await Promise.all([runCli(args), runCli([...args, "--all"])]);
    expect(first.code, first.stderr).toBe(0);
    const listed = first.stdout.split("\n").slice(1, -1);
    expect(listed).toEqual([...many.slice(0, 20).map((path) => `  ${path}`), "  … and 25 more (--all to list every one)"]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.split("\n").slice(1, -1)).toEqual(many.map((path) => `  ${path}`));
    expect(all.stdout).not.toContain("more (--all");
  });

  it("--all without --dry-run is refused before anything is read or stored (usage, exit 2)", async () => {
    const file = await setup();
    const result = await runCli(["import", "--from-plex-autoscan", file, "--all", "--config", config(), "--data-dir", join(temp.dir, "data")]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("--all lists the paths of a --dry-run: add --dry-run");
    expect(existsSync(join(temp.dir, "data", "queue.db"))).toBe(false);
  });

  it("imports into the configured queue with a summary, and a second run adds nothing", async () => {
    const file = await setup();
    const args = ["import", "--from-plex-autoscan", file, "--config", config(), "--data-dir", join(temp.dir, "data")];
    const first = await runCli(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Imported 3 scan request\(s\) from '.*plex_autoscan\.db' into .*queue\.db in \d+\.\d s: 3 queued, 0 merged into a waiting folder, 1 skipped \(not a full path\)\.\n$/);
    const second = await runCli(args);
    expect(second.stdout).toContain("0 queued, 3 merged into a waiting folder");
    const queue = await createScanQueue({ file: join(temp.dir, "data", "queue.db"), clock: createManualClock(), log: captureLog().log, scanDelayMs: 1000 });
    expect((await queue.listPending()).flatMap((item) => item.requests).map((request) => request.path).sort()).toEqual(paths.slice(0, 3).sort());
    await queue.close();
  });

  it("with plex_autoscan's own config.json: imports, and its legacy keys are warned about once with the command that rewrites them", async () => {
    const file = join(temp.dir, "plex_autoscan.db");
    writePlexAutoscanQueue(file, paths);
    const legacy = join(temp.dir, "legacy", "config.json");
    await mkdir(dirname(legacy), { recursive: true });
    await writeFile(legacy, fixtureText("l3uddz-legacy.json"));
    const result = await runCli(["import", "--from-plex-autoscan", file, "--config", legacy, "--data-dir", join(temp.dir, "data")]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Imported 3 scan request\(s\)/);
    expect(result.stderr).toMatch(/"PLEX_SECTION_PATH_MAPPINGS" is obsolete and ignored/);
    const hints = result.stderr.split("\n").filter((line) => line.includes("'autoscan config upgrade' rewrites the legacy key(s) above"));
    expect(hints, result.stderr).toHaveLength(1);
    expect(hints[0]).toContain("docker exec autoscan autoscan config upgrade");
  });

  it("refuses a file that is not plex_autoscan's queue (exit 2) and a missing PATH (usage)", async () => {
    await setup();
    const notQueue = join(temp.dir, "notes.txt");
    await writeFile(notQueue, "hello");
    const wrong = await runCli(["import", "--from-plex-autoscan", notQueue, "--config", config()]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`'${notQueue}' is not a plex_autoscan queue`);
    const missing = await runCli(["import", "--config", config()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--from-plex-autoscan PATH is required");
  });
});
