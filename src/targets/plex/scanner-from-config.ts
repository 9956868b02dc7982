import type { Config } from "../../config/schema.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/logger.ts";
import type { CommandRunner } from "../../docker/command-runner.ts";
import { createContainerRunner } from "../../docker/container-runner.ts";
import { createDockerExecutor, type DockerExecutor } from "../../docker/executor.ts";
import { createHostRunner } from "./host-runner.ts";
import { createPlexScanner, type PlexScanner } from "../../docker/plex-scanner.ts";
import { NATIVE_LAYOUT, resolveLayout, type ResolvedLayout, type ScannerLayout } from "../../docker/presets.ts";
import { listScannerSections, matchSectionsByName } from "../../docker/scanner-sections.ts";
import { unescapeShellWord } from "../../docker/unescape-shell-word.ts";
import { createPlexClient, type PlexClient } from "./client.ts";
import { createSectionResolver, type PlexSection } from "./sections.ts";

/**
 * Config → the Plex scanner (in the Plex container through Docker exec when USE_DOCKER, else on this host) and its
 * section resolver (the scanner target itself is composed in ./from-config.ts). plex_autoscan's keys keep their
 * meaning; PLEX_DOCKER_PRESET fills the layout keys still at plex_autoscan's defaults (a file written with every key
 * must not pin the native layout).
 */
export interface ScannerInput {
  readonly config: Config;
  /** Settings.dockerHost (DOCKER_HOST). */
  readonly dockerHost: string | undefined;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface ScannerParts {
  readonly scanner: PlexScanner;
  readonly runner: CommandRunner;
  /** Present in Docker mode. */
  readonly executor?: DockerExecutor;
}

export function createScannerFromConfig(input: ScannerInput): ScannerParts {
  const { config } = input;
  const log = input.log.child({ component: "PLEX" });
  const explicit = explicitLayout(config);
  if (!config.USE_DOCKER) {
    const runner = createHostRunner({ useSudo: config.USE_SUDO, clock: input.clock });
    const layout: ResolvedLayout = {
      layout: { ...NATIVE_LAYOUT, ...explicit },
      preset: "none",
      reason: "USE_DOCKER is false (this host)",
      fix: NATIVE_FIX,
    };
    return { runner, scanner: createPlexScanner({ runner, layout: async () => layout }) };
  }
  const executor = createDockerExecutor({ dockerHost: input.dockerHost, clock: input.clock });
  const runner = createContainerRunner(executor, config.DOCKER_NAME);
  const scanner = createPlexScanner({
    runner,
    layout: async () => {
      const resolved = await resolveLayout({
        preset: config.PLEX_DOCKER_PRESET,
        container: config.DOCKER_NAME,
        explicit,
        // plex_autoscan exported the support dir only outside Docker: in a container the image knows its own.
        fallback: { ...NATIVE_LAYOUT, supportDir: "" },
        probe: executor,
      });
      log.info(
        { preset: resolved.preset, scanner: resolved.layout.scanner, user: resolved.layout.user },
        `Plex scanner in container '${config.DOCKER_NAME}': preset ${resolved.preset} (${resolved.reason})`,
      );
      return resolved;
    },
  });
  return { runner, scanner, executor };
}

/** USE_DOCKER is false (the default) and the scanner is not on this host: most often Plex runs in a container. */
const NATIVE_FIX =
  "USE_DOCKER is false, so autoscan ran it on this host. If Plex runs in Docker, set USE_DOCKER to true and DOCKER_NAME " +
  "to the Plex container's name; if Plex is installed on this host, set PLEX_SCANNER to the scanner's path.";

/**
 * The layout keys the user changed from plex_autoscan's defaults, unescaped (`Plex\ Media\ Scanner` → a plain path).
 * Compared by value, because upgraded files list every key with its default.
 */
export function explicitLayout(config: Config): Partial<ScannerLayout> {
  const out: { -readonly [K in keyof ScannerLayout]?: string } = {};
  const pick = (key: keyof ScannerLayout, raw: string): void => {
    const value = unescapeShellWord(raw.trim());
    if (value !== NATIVE_LAYOUT[key]) out[key] = value;
  };
  pick("scanner", config.PLEX_SCANNER);
  pick("user", config.PLEX_USER);
  pick("supportDir", config.PLEX_SUPPORT_DIR);
  pick("ldLibraryPath", config.PLEX_LD_LIBRARY_PATH);
  return out;
}

/** The primary Plex's API client (`PLEX_LOCAL_URL`, `PLEX_TOKEN`, `PLEX_TIMEOUT`). */
export function plexClientFromConfig(config: Config): PlexClient {
  return createPlexClient({ url: config.PLEX_LOCAL_URL, token: config.PLEX_TOKEN, timeoutMs: config.PLEX_TIMEOUT * 1000 });
}

export interface FolderSections {
  resolve(folder: string, signal?: AbortSignal): Promise<PlexSection[]>;
  list(signal?: AbortSignal): Promise<PlexSection[]>;
  /** `api` with PLEX_TOKEN; else `scanner` (Plex SQLite, or `--list` names). */
  readonly source: "api" | "scanner";
}

/**
 * Which sections hold a folder: the Plex HTTP API when PLEX_TOKEN is set; else the scanner's own view — section
 * roots from the library database through `Plex SQLite`, or, failing that, `--list` names matched to path segments.
 */
export function createFolderSections(input: ScannerInput, scanner: PlexScanner): FolderSections {
  const { config, clock, log } = input;
  if (config.PLEX_TOKEN !== "") {
    const resolver = createSectionResolver({ client: plexClientFromConfig(config), clock, log });
    return { source: "api", resolve: resolver.resolve, list: resolver.list };
  }
  const resolver = createSectionResolver({
    client: { listSections: async () => (await listScannerSections(scanner)).sections },
    clock,
    log,
  });
  return {
    source: "scanner",
    list: resolver.list,
    async resolve(folder, signal) {
      const found = await resolver.resolve(folder, signal);
      if (found.length > 0) return found;
      const all = await resolver.list(signal);
      // Roots unknown (`--list` only): fall back to the section named like one of the folder's segments.
      return all.every((section) => section.locations.length === 0) ? matchSectionsByName(all, folder) : [];
    },
  };
}
