import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

type Raw = Record<string, unknown>;

export const FIXTURE_DIR = fileURLToPath(new URL("../../src/config/fixtures/", import.meta.url));
export const EXAMPLE_CONFIG = fileURLToPath(new URL("../../config/config.example.json", import.meta.url));

export function fixturePath(name: string): string {
  return `${FIXTURE_DIR}${name}`;
}

export function fixtureText(name: string): string {
  return readFileSync(fixturePath(name), "utf8");
}

export function readFixture(name: string): Raw {
  return JSON.parse(fixtureText(name)) as Raw;
}

/**
 * Sections of plex_autoscan's file whose children are keys of their own. Every other object (SERVER_PATH_MAPPINGS,
 * SERVER_SCAN_PRIORITIES …) is one value: its keys are the user's paths, not config keys.
 */
const SECTIONS = new Set(["GOOGLE", "CLOUD", "GOOGLE.ALLOWED", "CLOUD.ALLOWED", "RCLONE", "RCLONE.RC_CACHE_REFRESH"]);

/** `[["PLEX_USER", "plex"], ["GOOGLE.ALLOWED.FILE_PATHS", […]], …]`: every key of the file with its value. */
export function leafKeys(raw: Raw, prefix = ""): [string, unknown][] {
  return Object.entries(raw).flatMap(([key, value]): [string, unknown][] => {
    const path = `${prefix}${key}`;
    const isSection = SECTIONS.has(path) && typeof value === "object" && value !== null && !Array.isArray(value);
    return isSection ? leafKeys(value as Raw, `${path}.`) : [[path, value]];
  });
}

export function valueAt(raw: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((current, key) => {
    if (typeof current !== "object" || current === null) return undefined;
    return (current as Raw)[key];
  }, raw);
}

/** plex_autoscan's `GOOGLE.X` is autoscan's `CLOUD.X`. */
export function autoscanPath(path: string): string {
  return path.replace(/^GOOGLE\./, "CLOUD.");
}
