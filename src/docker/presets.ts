import { posix } from "node:path";
import type { ContainerInfo, PathStat } from "./container-queries.ts";
import { ScannerNotFoundError } from "./errors.ts";

/**
 * Where `Plex Media Scanner` lives, whom it runs as and what environment it needs, by Plex image
 * (integrations.md §3.4). `PLEX_DOCKER_PRESET` picks one (`auto`: from the container's image, then by which binary
 * exists) and fills the PLEX_SCANNER / PLEX_USER / PLEX_SUPPORT_DIR / PLEX_LD_LIBRARY_PATH keys the user left unset.
 */
export type PresetName = "pms-docker" | "linuxserver" | "hotio";
export type PresetSetting = "auto" | PresetName | "none";

export interface ScannerLayout {
  /** Path of the `Plex Media Scanner` binary, unescaped. */
  readonly scanner: string;
  /** User to run as; "" runs as the container's (or our) default user. */
  readonly user: string;
  /** → PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR; "" passes nothing. */
  readonly supportDir: string;
  /** → LD_LIBRARY_PATH; "" passes nothing. */
  readonly ldLibraryPath: string;
}

const NATIVE_SCANNER = "/usr/lib/plexmediaserver/Plex Media Scanner";
const HOTIO_SCANNER = "/app/bin/usr/lib/plexmediaserver/Plex Media Scanner";

export const PRESETS: Readonly<Record<PresetName, ScannerLayout>> = {
  // The s6 run script computes ~plex/Library/Application Support; plex's home is /config.
  "pms-docker": {
    scanner: NATIVE_SCANNER,
    user: "plex",
    supportDir: "/config/Library/Application Support",
    ldLibraryPath: "/usr/lib/plexmediaserver/lib",
  },
  // The image ENV already sets the support dir; passing the same value again is harmless.
  linuxserver: {
    scanner: NATIVE_SCANNER,
    user: "abc",
    supportDir: "/config/Library/Application Support",
    ldLibraryPath: "/usr/lib/plexmediaserver/lib",
  },
  // Since 2024-03 hotio runs PMS from /app/bin and sets the support dir only in its s6 script: exec must pass it.
  hotio: {
    scanner: HOTIO_SCANNER,
    user: "hotio",
    supportDir: "/app/config",
    ldLibraryPath: "/app/bin/usr/lib/plexmediaserver/lib",
  },
};

/** plex_autoscan's defaults (the Debian/Ubuntu package), for `PLEX_DOCKER_PRESET: "none"` and native installs. */
export const NATIVE_LAYOUT: ScannerLayout = {
  scanner: NATIVE_SCANNER,
  user: "plex",
  supportDir: "/var/lib/plexmediaserver/Library/Application Support",
  ldLibraryPath: "/usr/lib/plexmediaserver/lib",
};

/** The preset an image reference names (`plexinc/pms-docker:latest`, `lscr.io/linuxserver/plex`, `ghcr.io/hotio/plex:release`). */
export function presetForImage(image: string): PresetName | undefined {
  const repo = repositoryOf(image);
  const is = (name: string): boolean => repo === name || repo.endsWith(`/${name}`);
  if (is("plexinc/pms-docker") || repo === "pms-docker") return "pms-docker";
  if (is("linuxserver/plex")) return "linuxserver";
  if (is("hotio/plex")) return "hotio";
  return undefined;
}

/** `registry:5000/owner/name:tag@sha256:…` → `owner/name` (lower case, Docker Hub's `library/` dropped). */
function repositoryOf(image: string): string {
  let ref = image.trim().toLowerCase().split("@")[0] as string;
  const lastSlash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  if (colon > lastSlash) ref = ref.slice(0, colon);
  const parts = ref.split("/");
  const first = parts[0] ?? "";
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) parts.shift();
  if (parts[0] === "library") parts.shift();
  return parts.join("/");
}

/** What auto-detection needs from Docker (the DockerExecutor has it). */
export interface LayoutProbe {
  inspect(container: string): Promise<ContainerInfo>;
  stat(container: string, path: string): Promise<PathStat | undefined>;
}

export interface ResolveLayoutOptions {
  readonly preset: PresetSetting;
  readonly container: string;
  /** The keys the user set in the config file or environment (already unescaped): they always win. */
  readonly explicit: Partial<ScannerLayout>;
  /** Values for keys neither set nor filled by a preset (the config defaults). */
  readonly fallback: ScannerLayout;
  readonly probe: LayoutProbe;
}

export interface ResolvedLayout {
  readonly layout: ScannerLayout;
  readonly preset: PresetName | "none";
  /** How the preset was chosen, for the log. */
  readonly reason: string;
  /**
   * What to tell the user when the scanner cannot be started with this layout, when the setup knows better than the
   * preset advice (on this host with USE_DOCKER false: "set USE_DOCKER and DOCKER_NAME", not a preset never chosen).
   */
  readonly fix?: string;
}

export async function resolveLayout(options: ResolveLayoutOptions): Promise<ResolvedLayout> {
  const { preset, explicit, fallback } = options;
  if (preset === "none") return { layout: { ...fallback, ...explicit }, preset, reason: "PLEX_DOCKER_PRESET is none" };
  if (preset !== "auto") {
    return { layout: { ...PRESETS[preset], ...explicit }, preset, reason: `PLEX_DOCKER_PRESET is ${preset}` };
  }
  const detected = await detectPreset(options);
  return { ...detected, layout: { ...detected.layout, ...explicit } };
}

async function detectPreset(options: ResolveLayoutOptions): Promise<ResolvedLayout> {
  const { container, probe, explicit } = options;
  const info = await probe.inspect(container);
  // The image's other tags only count when the container was created from a bare id: an image tagged twice
  // (a mirror, a retag) must not override the name the user ran.
  const refs = IMAGE_ID.test(info.image) ? info.imageTags : [info.image];
  const matched = refs.find((ref) => presetForImage(ref) !== undefined);
  const image = matched === undefined ? undefined : presetForImage(matched);
  const looked = explicit.scanner !== undefined ? [explicit.scanner] : candidatePaths(image);
  let found: string | undefined;
  for (const path of looked) {
    if ((await probe.stat(container, path))?.isDirectory === false) {
      found = path;
      break;
    }
  }
  if (found === undefined) {
    throw new ScannerNotFoundError(
      `No Plex Media Scanner in container "${container}" (image ${info.image}${image ? `, preset ${image}` : ""}): ` +
        `looked for ${looked.map((path) => `"${path}"`).join(" and ")}. ` +
        // An image of no known Plex family is as likely the wrong container (DOCKER_NAME) as an unusual layout.
        (image
          ? "Set PLEX_SCANNER to its path in the container, or PLEX_DOCKER_PRESET to the image's layout."
          : "Check that DOCKER_NAME names your Plex container; if it does, set PLEX_SCANNER to the scanner's path in it, " +
            "or PLEX_DOCKER_PRESET to the image's layout."),
    );
  }
  const name = image ?? guessPreset(found, info);
  const base = PRESETS[name];
  const why = matched ? `image ${matched}` : `guessed from ${found}${name === "linuxserver" ? " and the image ENV" : ""}`;
  if (found === base.scanner) return { layout: base, preset: name, reason: `auto: ${why}` };
  // An older image of that family (hotio before 2024-03 installed the package at /usr/lib/plexmediaserver).
  const relocated = { ...base, scanner: found, ldLibraryPath: posix.join(posix.dirname(found), "lib") };
  return { layout: relocated, preset: name, reason: `auto: ${why}, scanner found at ${found}` };
}

const IMAGE_ID = /^(sha256:)?[0-9a-f]{12,64}$/;

function candidatePaths(image: PresetName | undefined): string[] {
  const first = image ? PRESETS[image].scanner : HOTIO_SCANNER;
  return [...new Set([first, HOTIO_SCANNER, NATIVE_SCANNER])];
}

/** An image we do not know: hotio's path is unique; linuxserver sets the support dir in its image ENV. */
function guessPreset(scanner: string, info: ContainerInfo): PresetName {
  if (scanner.startsWith("/app/bin/")) return "hotio";
  if (info.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR !== undefined) return "linuxserver";
  return "pms-docker";
}
