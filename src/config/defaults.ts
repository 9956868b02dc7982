import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { ConfigSchema, type Config } from "./schema.ts";

/** A fresh secret for the webhook URL: 32 hex characters, like plex_autoscan's uuid4().hex. */
export function generateServerPass(): string {
  return randomBytes(16).toString("hex");
}

/** Placeholder kept in config/config.example.json; first start and `config init` replace it with a random one. */
export const EXAMPLE_PASS = "change-me-to-a-long-random-secret";

/**
 * The documented default file: every key with its default, plus the same kind of examples plex_autoscan's fresh
 * file carried (a mapping, an ignore list, drive filters) so the shapes are visible. config/config.example.json
 * holds exactly this (with EXAMPLE_PASS); a test keeps the two equal.
 */
export function buildDefaultConfig(serverPass: string): Omit<Config, "SERVER_USE_SQLITE"> {
  // SERVER_USE_SQLITE is only read from plex_autoscan's files (and said to be ignored there): a fresh file leaves it out.
  const { SERVER_USE_SQLITE: _ignored, ...config } = v.parse(ConfigSchema, { SERVER_PASS: serverPass });
  return {
    ...config,
    SERVER_PATH_MAPPINGS: {
      "/data/Movies/": ["/mnt/unionfs/Media/Movies/", "My Drive/Media/Movies/"],
      "/data/TV/": ["/mnt/unionfs/Media/TV/", "My Drive/Media/TV/"],
    },
    SERVER_IGNORE_LIST: ["/.grab/", ".DS_Store", "Thumbs.db"],
    CLOUD: {
      ...config.CLOUD,
      ALLOWED: {
        FILE_PATHS: ["My Drive/Media/Movies/", "My Drive/Media/TV/"],
        FILE_EXTENSIONS: true,
        FILE_EXTENSIONS_LIST: ["avi", "m4v", "mkv", "mp4", "mpg", "mpeg", "ts", "webm", "wmv", "srt", "ass", "ssa"],
        MIME_TYPES: true,
        MIME_TYPES_LIST: ["video"],
      },
    },
  };
}

/** The default file as text (2-space JSON, newline at the end). */
export function renderConfig(config: unknown): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}
