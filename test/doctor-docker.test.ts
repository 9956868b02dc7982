import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveSettings } from "../src/config/settings.ts";
import { loadDoctorConfig, runDoctor } from "../src/ops/doctor/doctor.ts";
import type { CheckResult } from "../src/ops/doctor/check.ts";
import { captureLog } from "./support/capture-log.ts";
import {
  absentContainerName,
  createContainerPool,
  describeDocker,
  ensureFakePlexImage,
  probeEngine,
  type ContainerPool,
} from "./support/docker/engine.ts";
import { startFakePlex, type FakePlex } from "./support/fake-plex.ts";
import { freePort } from "./support/free-port.ts";

/** `autoscan doctor` in scanner mode against a real Docker engine and the fake Plex image (test/support/docker). */
const engine = await probeEngine();

describeDocker("autoscan doctor: the scanner's container (real engine)", engine, (docker: Docker) => {
  let pool: ContainerPool;
  let root: string;
  let plex: FakePlex;
  let running: string;
  let stopped: string;
  let count = 0;

  beforeAll(async () => {
    const images = await ensureFakePlexImage(docker);
    pool = createContainerPool(docker, "doctor");
    root = await mkdtemp(join(tmpdir(), "autoscan-doctor-docker-"));
    await mkdir(join(root, "Movies"));
    plex = await startFakePlex({ sections: [{ key: "1", title: "Movies", type: "movie", locations: [join(root, "Movies")] }] });
    [running, stopped] = await Promise.all([
      pool.start(images.pmsDocker).then((c) => c.name),
      pool.start(images.pmsDocker).then(async (c) => {
        await c.stop({ t: 0 });
        return c.name;
      }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await pool?.removeAll();
    await plex?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function doctor(extra: Record<string, unknown>) {
    const dir = join(root, `case-${++count}`);
    await mkdir(dir);
    const path = join(dir, "config.json");
    const config = {
      SERVER_PASS: "doctor-docker-0123456789abcdef",
      SERVER_IP: "127.0.0.1",
      SERVER_PORT: await freePort(),
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      PLEX_SCAN_METHOD: "scanner",
      USE_DOCKER: true,
      ...extra,
    };
    await writeFile(path, JSON.stringify(config));
    const env = { DOCKER_HOST: process.env.DOCKER_HOST };
    const settings = resolveSettings({ config: path }, env, dir);
    const report = await runDoctor({ settings, env, loaded: await loadDoctorConfig(settings, env), log: captureLog().log, inContainer: false });
    const check = (id: string): CheckResult | undefined => report.checks.find((c) => c.id === id);
    return { report, check };
  }

  it("a running container with the scanner and the user: every check passes", async () => {
    const run = await doctor({ DOCKER_NAME: running });
    expect(run.report.checks.filter((c) => c.status !== "ok")).toEqual([]);
    expect(run.check("scanner.container")?.detail).toContain(`Container '${running}' is running`);
    expect(run.check("scanner.binary")?.detail).toContain("/usr/lib/plexmediaserver/Plex Media Scanner");
    expect(run.check("scanner.user")?.detail).toBe(`User 'plex' exists in container '${running}'.`);
    expect(run.report.ok).toBe(true);
  });

  it("a stopped container: named, with 'docker start' as the fix", async () => {
    const run = await doctor({ DOCKER_NAME: stopped });
    expect(run.check("scanner.container")).toMatchObject({
      status: "error",
      detail: `Container '${stopped}' is exited: scans wait until it runs.`,
      fix: `Start it: docker start ${stopped}.`,
    });
    // The scanner is found in a stopped container too; the user check needs it running.
    expect(run.check("scanner.binary")?.status).toBe("ok");
    expect(run.check("scanner.user")?.status).toBe("skip");
    expect(run.report.ok).toBe(false);
  });

  it("a container that does not exist: DOCKER_NAME named, the running ones listed", async () => {
    const run = await doctor({ DOCKER_NAME: absentContainerName() });
    expect(run.check("scanner.container")).toMatchObject({ status: "error", fix: "Set DOCKER_NAME to the Plex container's name." });
    expect(run.check("scanner.container")?.detail).toContain(running);
    expect(run.check("scanner.binary")?.status).toBe("skip");
  });

  it("a PLEX_USER the container does not have, and a scanner path that is wrong", async () => {
    const noUser = await doctor({ DOCKER_NAME: running, PLEX_USER: "nosuchuser" });
    expect(noUser.check("scanner.user")).toMatchObject({ status: "error", detail: `There is no user 'nosuchuser' (PLEX_USER) in container '${running}'.` });
    expect(noUser.check("scanner.user")?.fix).toContain("Set PLEX_USER");

    const noScanner = await doctor({ DOCKER_NAME: running, PLEX_SCANNER: "/opt/nowhere/Plex\\ Media\\ Scanner" });
    expect(noScanner.check("scanner.binary")).toMatchObject({ status: "error", detail: expect.stringContaining('"/opt/nowhere/Plex Media Scanner"') });
    expect(noScanner.check("scanner.binary")?.fix).toContain("PLEX_SCANNER");
    expect(noScanner.check("scanner.user")?.status).toBe("skip");
  });
});
