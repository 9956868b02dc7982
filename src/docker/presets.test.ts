import { describe, expect, it } from "vitest";
import type { ContainerInfo, PathStat } from "./container-queries.ts";
import { ScannerNotFoundError } from "./errors.ts";
import { NATIVE_LAYOUT, PRESETS, presetForImage, resolveLayout, type LayoutProbe } from "./presets.ts";

describe("presetForImage", () => {
  it.each([
    ["plexinc/pms-docker", "pms-docker"],
    ["plexinc/pms-docker:1.41.3.9314-a0bfb8370", "pms-docker"],
    ["docker.io/plexinc/pms-docker:latest", "pms-docker"],
    ["linuxserver/plex", "linuxserver"],
    ["lscr.io/linuxserver/plex:latest", "linuxserver"],
    ["ghcr.io/linuxserver/plex@sha256:0123abcd", "linuxserver"],
    ["registry.local:5000/mirror/linuxserver/plex:1.41", "linuxserver"],
    ["hotio/plex:release", "hotio"],
    ["ghcr.io/hotio/plex:release-1.41", "hotio"],
    ["GHCR.IO/Hotio/Plex", "hotio"],
    ["jellyfin/jellyfin", undefined],
    ["someone/plex-custom", undefined],
    ["sha256:3f2a", undefined],
  ])("%s → %s", (image, preset) => {
    expect(presetForImage(image)).toBe(preset);
  });
});

/** Answers like Docker would for a container with these files (a stand-in for the engine at the port). */
function probe(image: string, files: string[], env: Record<string, string> = {}, imageTags: string[] = []): LayoutProbe {
  return {
    inspect: async (name): Promise<ContainerInfo> => ({ name, image, imageTags, state: "running", env }),
    stat: async (_container, path): Promise<PathStat | undefined> =>
      files.includes(path)
        ? { name: path, mode: 0o755, isDirectory: false, isSymlink: false, isExecutable: true }
        : undefined,
  };
}

const HOTIO_BIN = PRESETS.hotio.scanner;
const NATIVE_BIN = NATIVE_LAYOUT.scanner;

describe("resolveLayout", () => {
  const base = { container: "plex", explicit: {}, fallback: NATIVE_LAYOUT };

  it("uses a named preset without asking Docker, explicit keys winning", async () => {
    const resolved = await resolveLayout({
      ...base,
      preset: "hotio",
      explicit: { user: "media" },
      probe: probe("x", []),
    });
    expect(resolved.layout).toEqual({ ...PRESETS.hotio, user: "media" });
  });

  it("uses the config values with preset none", async () => {
    const resolved = await resolveLayout({ ...base, preset: "none", explicit: { scanner: "/opt/scan" }, probe: probe("x", []) });
    expect(resolved.layout).toEqual({ ...NATIVE_LAYOUT, scanner: "/opt/scan" });
  });

  it.each([
    ["lscr.io/linuxserver/plex:latest", [NATIVE_BIN], "linuxserver"],
    ["plexinc/pms-docker", [NATIVE_BIN], "pms-docker"],
    ["ghcr.io/hotio/plex:release", [HOTIO_BIN], "hotio"],
  ] as const)("auto: %s → %s", async (image, files, preset) => {
    const resolved = await resolveLayout({ ...base, preset: "auto", probe: probe(image, [...files]) });
    expect(resolved.preset).toBe(preset);
    expect(resolved.layout).toEqual(PRESETS[preset]);
    expect(resolved.reason).toContain(`image ${image}`);
  });

  it("auto: reads the image's tags only when the container was created from a bare image id", async () => {
    const tags = ["lscr.io/linuxserver/plex:latest"];
    const byId = await resolveLayout({ ...base, preset: "auto", probe: probe("sha256:0123456789abcdef0123", [NATIVE_BIN], {}, tags) });
    expect(byId).toMatchObject({ preset: "linuxserver", reason: "auto: image lscr.io/linuxserver/plex:latest" });
    const byName = await resolveLayout({ ...base, preset: "auto", probe: probe("me/plex:1", [NATIVE_BIN], {}, tags) });
    expect(byName.preset).toBe("pms-docker");
  });

  it("auto: an older hotio image with the package at /usr/lib keeps hotio's user and finds the binary", async () => {
    const resolved = await resolveLayout({ ...base, preset: "auto", probe: probe("hotio/plex:2023", [NATIVE_BIN]) });
    expect(resolved.layout).toEqual({
      ...PRESETS.hotio,
      scanner: NATIVE_BIN,
      ldLibraryPath: "/usr/lib/plexmediaserver/lib",
    });
  });

  it("auto: an unknown image is guessed from the binary and the image ENV", async () => {
    const hotioLike = await resolveLayout({ ...base, preset: "auto", probe: probe("me/plex", [HOTIO_BIN]) });
    expect(hotioLike.preset).toBe("hotio");
    const lsioLike = await resolveLayout({
      ...base,
      preset: "auto",
      probe: probe("me/plex", [NATIVE_BIN], {
        PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: "/config/Library/Application Support",
      }),
    });
    expect(lsioLike.preset).toBe("linuxserver");
    const pmsLike = await resolveLayout({ ...base, preset: "auto", probe: probe("me/plex", [NATIVE_BIN]) });
    expect(pmsLike.preset).toBe("pms-docker");
    expect(pmsLike.reason).toContain("guessed");
  });

  it("auto: says which paths it looked at when no scanner exists", async () => {
    const error = await resolveLayout({ ...base, preset: "auto", probe: probe("me/jellyfin", []) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScannerNotFoundError);
    expect((error as Error).message).toBe(
      `No Plex Media Scanner in container "plex" (image me/jellyfin): looked for "${HOTIO_BIN}" and "${NATIVE_BIN}". ` +
        "Check that DOCKER_NAME names your Plex container; if it does, set PLEX_SCANNER to the scanner's path in it, " +
        "or PLEX_DOCKER_PRESET to the image's layout.",
    );
  });
});
