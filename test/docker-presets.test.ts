import type Docker from "dockerode";
import * as v from "valibot";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createScannerFromConfig } from "../src/targets/plex/scanner-from-config.ts";
import { ConfigSchema } from "../src/config/schema.ts";
import { systemClock } from "../src/core/clock.ts";
import { ScannerNotFoundError } from "../src/docker/errors.ts";
import { pino } from "pino";
import {
  createContainerPool,
  describeDocker,
  ensureFakePlexImage,
  probeEngine,
  type ContainerPool,
  type FakePlexImage,
} from "./support/docker/engine.ts";

const engine = await probeEngine();
const NATIVE_BIN = "/usr/lib/plexmediaserver/Plex Media Scanner";
const HOTIO_BIN = "/app/bin/usr/lib/plexmediaserver/Plex Media Scanner";

describeDocker("Scanner presets against real containers", engine, (docker: Docker) => {
  let images: FakePlexImage;
  let pool: ContainerPool;
  const names: Record<"plain" | "pmsDocker" | "linuxserver" | "hotio", string> = {
    plain: "",
    pmsDocker: "",
    linuxserver: "",
    hotio: "",
  };

  beforeAll(async () => {
    images = await ensureFakePlexImage(docker);
    pool = createContainerPool(docker, "presets");
    for (const key of Object.keys(names) as (keyof typeof names)[]) names[key] = (await pool.start(images[key])).name;
  });
  afterAll(async () => pool?.removeAll());

  /** Runs `--list` through the wiring with these config keys and returns what the fake scanner recorded. */
  async function listWith(container: string, keys: Record<string, unknown>) {
    const config = v.parse(ConfigSchema, { SERVER_PASS: "x-0123456789", USE_DOCKER: true, DOCKER_NAME: container, ...keys });
    const { scanner } = createScannerFromConfig({
      config,
      dockerHost: process.env.DOCKER_HOST,
      clock: systemClock,
      log: pino({ level: "silent" }),
    });
    const result = await scanner.run(["--list"]);
    const line = result.stdout.split("\n").find((entry) => entry.startsWith("FAKE-SCANNER-RECORD "));
    const record = JSON.parse(line?.slice("FAKE-SCANNER-RECORD ".length) ?? "{}") as {
      script: string;
      user: string;
      uid: number;
      env: Record<string, string>;
    };
    return { record, layout: await scanner.layout() };
  }

  it.each([
    ["pmsDocker", "pms-docker", NATIVE_BIN, "plex", "/config/Library/Application Support", "/usr/lib/plexmediaserver/lib"],
    ["linuxserver", "linuxserver", NATIVE_BIN, "abc", "/config/Library/Application Support", "/usr/lib/plexmediaserver/lib"],
    ["hotio", "hotio", HOTIO_BIN, "hotio", "/app/config", "/app/bin/usr/lib/plexmediaserver/lib"],
  ] as const)("auto on the %s image runs the scanner as the image expects", async (key, preset, script, user, support, lib) => {
    // plex_autoscan's escaped defaults are in the file: they are defaults, so the preset fills them.
    const { record, layout } = await listWith(names[key], {
      PLEX_SCANNER: "/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner",
      PLEX_SUPPORT_DIR: "/var/lib/plexmediaserver/Library/Application\\ Support",
    });
    expect(layout.preset).toBe(preset);
    expect(record).toMatchObject({ script, user });
    expect(record.env).toMatchObject({ PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR: support, LD_LIBRARY_PATH: lib });
  });

  it("guesses an image it does not know from the binary it finds", async () => {
    const { layout } = await listWith(names.plain, {});
    expect(layout.preset).toBe("hotio");
    expect(layout.reason).toContain("guessed from /app/bin/");
  });

  it("keeps the keys the user changed, unescaped, and fills the rest", async () => {
    const { record } = await listWith(names.linuxserver, {
      PLEX_SCANNER: "/app/bin/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner",
    });
    expect(record).toMatchObject({ script: HOTIO_BIN, user: "abc", uid: 911 });
    const { record: asUser } = await listWith(names.pmsDocker, { PLEX_USER: "hotio" });
    expect(asUser).toMatchObject({ script: NATIVE_BIN, user: "hotio" });
  });

  it("with preset none uses plex_autoscan's values and, as it did in Docker, no support dir", async () => {
    const { record, layout } = await listWith(names.hotio, { PLEX_DOCKER_PRESET: "none" });
    expect(layout.preset).toBe("none");
    expect(record).toMatchObject({ script: NATIVE_BIN, user: "plex" });
    expect(record.env.LD_LIBRARY_PATH).toBe("/usr/lib/plexmediaserver/lib");
    expect(record.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR).toBeUndefined();
  });

  it("says when the user does not exist in the container", async () => {
    const error = await listWith(names.pmsDocker, { PLEX_USER: "jellyfin" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScannerNotFoundError);
    expect((error as Error).message).toMatch(
      new RegExp(`^There is no user "jellyfin" \\(container "${names.pmsDocker}"\\): unable to find user jellyfin.*Set PLEX_USER`),
    );
  });

  it("says which path and preset were tried when the binary is not there", async () => {
    const auto = await listWith(names.hotio, { PLEX_SCANNER: "/opt/plex/Plex\\ Media\\ Scanner" }).catch((e: unknown) => e);
    expect(auto).toBeInstanceOf(ScannerNotFoundError);
    expect((auto as Error).message).toContain('looked for "/opt/plex/Plex Media Scanner"');

    const named = await listWith(names.hotio, {
      PLEX_DOCKER_PRESET: "hotio",
      PLEX_SCANNER: "/opt/plex/Plex\\ Media\\ Scanner",
    }).catch((e: unknown) => e);
    expect(named).toBeInstanceOf(ScannerNotFoundError);
    expect((named as Error).message).toMatch(
      new RegExp(
        `^Could not run "/opt/plex/Plex Media Scanner" \\(container "${names.hotio}", user hotio, exit 12[67]: ` +
          ".*\\)\\. Tried the path from preset hotio \\(PLEX_DOCKER_PRESET is hotio\\)",
      ),
    );
  });
});
