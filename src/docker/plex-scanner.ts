import { posix } from "node:path";
import type { CommandRunner, ExecResult, OutputLine, ProcessInfo, RunOptions, RunPlan } from "./command-runner.ts";
import { ScannerNotFoundError } from "./errors.ts";
import type { ResolvedLayout, ScannerLayout } from "./presets.ts";

/**
 * `Plex Media Scanner` wherever it runs (a container or this host): argv built as an array (no shell, so any path
 * reaches it byte for byte), the layout's environment passed explicitly, and its failure to start told apart from a
 * failed scan.
 */
export interface PlexScannerOptions {
  readonly runner: CommandRunner;
  /** The layout, resolved lazily (auto-detection asks Docker); re-resolved after the binary could not be run. */
  readonly layout: () => Promise<ResolvedLayout>;
}

export interface ScannerRunOptions {
  readonly onLine?: (line: OutputLine) => void;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface ScannerSection {
  readonly id: string;
  readonly name: string;
}

export interface ScannerSectionLocation extends ScannerSection {
  readonly path: string;
}

export interface PlexScanner {
  readonly where: string;
  layout(): Promise<ResolvedLayout>;
  plan(args: readonly string[]): Promise<RunPlan>;
  /** Runs the scanner; a non-zero exit is in the result, except 126/127 (could not start) → ScannerNotFoundError. */
  run(args: readonly string[], options?: ScannerRunOptions): Promise<ExecResult>;
  /** `--list`: the sections, ids and names only. */
  listSections(options?: ScannerRunOptions): Promise<ScannerSection[]>;
  /** Section roots from the library database through `Plex SQLite` (next to the scanner); undefined when unavailable. */
  sectionLocations(options?: ScannerRunOptions): Promise<ScannerSectionLocation[] | undefined>;
  /** `Plex Media Scanner` processes running there now. */
  runningScanners(): Promise<ProcessInfo[]>;
  /** Throws the classified error (container stopped, Docker unreachable …) when the scanner cannot run now. */
  assertAvailable(): Promise<void>;
}

/** The classic partial scan: `--scan --refresh --section <id> --directory <folder>` (integrations.md §3.2). */
export function scanArgs(section: string, directory: string): string[] {
  return ["--scan", "--refresh", "--section", section, "--directory", directory];
}

/** `  1: Movies` lines of `Plex Media Scanner --list`. */
export function parseSectionList(output: string): ScannerSection[] {
  const sections: ScannerSection[] = [];
  for (const line of output.split("\n")) {
    const match = /^\s*(\d+):\s*(.*?)\s*$/.exec(line);
    if (match) sections.push({ id: match[1] as string, name: match[2] as string });
  }
  return sections;
}

export function createPlexScanner(options: PlexScannerOptions): PlexScanner {
  const { runner } = options;
  let resolving: Promise<ResolvedLayout> | undefined;
  const layout = (): Promise<ResolvedLayout> => {
    resolving ??= options.layout().catch((error: unknown) => {
      resolving = undefined;
      throw error;
    });
    return resolving;
  };

  async function runBinary(binary: string, args: readonly string[], run: ScannerRunOptions = {}) {
    const resolved = await layout();
    const result = await runner.run([binary, ...args], { ...runOptions(resolved.layout), ...run });
    if (result.exitCode === 126 || result.exitCode === 127) {
      resolving = undefined;
      throw notRunnable(binary, resolved, runner.where, result);
    }
    return result;
  }

  return {
    where: runner.where,
    layout,
    plan: async (args) => {
      const resolved = await layout();
      return runner.plan([resolved.layout.scanner, ...args], runOptions(resolved.layout));
    },
    run: async (args, run) => runBinary((await layout()).layout.scanner, args, run),
    async listSections(run) {
      const result = await runBinary((await layout()).layout.scanner, ["--list"], run);
      if (result.exitCode !== 0) throw new Error(`Plex Media Scanner --list exited with code ${result.exitCode}`);
      return parseSectionList(result.stdout);
    },
    async sectionLocations(run) {
      const { layout: current } = await layout();
      if (current.supportDir === "") return undefined;
      const sqlite = posix.join(posix.dirname(current.scanner), "Plex SQLite");
      const database = posix.join(current.supportDir, LIBRARY_DB);
      const result = await runBinary(sqlite, ["-readonly", "-json", database, LOCATIONS_SQL], run).catch(() => undefined);
      if (!result || result.exitCode !== 0) return undefined;
      return parseLocations(result.stdout);
    },
    async runningScanners() {
      const name = posix.basename((await layout()).layout.scanner);
      return (await runner.listProcesses()).filter((process) => commandRuns(process.command, name));
    },
    assertAvailable: () => runner.assertAvailable(),
  };
}

const LIBRARY_DB = "Plex Media Server/Plug-in Support/Databases/com.plexapp.plugins.library.db";
const LOCATIONS_SQL =
  "SELECT s.id AS id, s.name AS name, l.root_path AS path FROM section_locations l " +
  "JOIN library_sections s ON s.id = l.library_section_id ORDER BY s.id, l.id";

function runOptions(layout: ScannerLayout): RunOptions {
  const env: Record<string, string> = {};
  if (layout.ldLibraryPath !== "") env.LD_LIBRARY_PATH = layout.ldLibraryPath;
  if (layout.supportDir !== "") env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR = layout.supportDir;
  return { env, ...(layout.user !== "" ? { user: layout.user } : {}) };
}

/** `sqlite3 -json` prints nothing for no rows, else one JSON array of row objects. */
function parseLocations(stdout: string): ScannerSectionLocation[] | undefined {
  if (stdout.trim() === "") return [];
  try {
    const rows = JSON.parse(stdout) as unknown;
    if (!Array.isArray(rows)) return undefined;
    return rows.flatMap((row: { id?: unknown; name?: unknown; path?: unknown }) =>
      typeof row.path === "string" && (typeof row.id === "number" || typeof row.id === "string")
        ? [{ id: String(row.id), name: typeof row.name === "string" ? row.name : "", path: row.path }]
        : [],
    );
  } catch {
    return undefined;
  }
}

/** `ps` joins argv with spaces, so look for the binary's name as a path's last segment followed by an argument or the end. */
function commandRuns(command: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[/ ])${escaped}( |$)`).test(command);
}

function notRunnable(binary: string, resolved: ResolvedLayout, where: string, result: ExecResult): Error {
  const said = (result.stdout + result.stderr).trim().split("\n")[0]?.trim() ?? "";
  if (/unable to find user|no matching entries in passwd/i.test(said)) {
    // runc refuses an exec `User` missing from the container's /etc/passwd with exit 126.
    return new ScannerNotFoundError(
      `There is no user "${resolved.layout.user}" (${where}): ${said}. ` +
        "Set PLEX_USER to the user Plex runs as there (plex, abc, hotio, or a uid), or PLEX_DOCKER_PRESET to the image's layout.",
    );
  }
  const how = resolved.preset === "none" ? "PLEX_DOCKER_PRESET none" : `preset ${resolved.preset} (${resolved.reason})`;
  const fix = resolved.fix ?? `Tried the path from ${how}; set PLEX_SCANNER to the scanner's path there, or PLEX_DOCKER_PRESET to the image's layout.`;
  return new ScannerNotFoundError(
    `Could not run "${binary}" (${where}${resolved.layout.user ? `, user ${resolved.layout.user}` : ""}, ` +
      `exit ${result.exitCode}${said ? `: ${said}` : ""}). ${fix}`,
  );
}
