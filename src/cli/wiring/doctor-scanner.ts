import { access, constants, readFile, stat } from "node:fs/promises";
import type { Config } from "../../config/schema.ts";
import type { Settings } from "../../config/settings.ts";
import { systemClock } from "../../core/clock.ts";
import { ContainerNotFoundError } from "../../docker/errors.ts";
import { createDockerExecutor } from "../../docker/executor.ts";
import { NATIVE_LAYOUT, resolveLayout } from "../../docker/presets.ts";
import type { ScannerProbe } from "../../ops/doctor/scanner.ts";
import { explicitLayout } from "./docker.ts";

/**
 * Doctor's look at the scanner mode, through the modules the scanner target itself uses: the Plex Media Scanner on
 * this host (`USE_DOCKER` false), or in the Plex container through the Docker executor and the preset detection.
 */
export function scannerProbe(config: Config, settings: Settings): ScannerProbe {
  const explicit = explicitLayout(config);
  if (!config.USE_DOCKER) {
    const layout = { ...NATIVE_LAYOUT, ...explicit };
    return {
      kind: "host",
      usesSudo: config.USE_SUDO,
      async locateScanner() {
        const info = await stat(layout.scanner).catch(() => undefined);
        const runnable = info?.isFile() === true && (await access(layout.scanner, constants.X_OK).then(() => true, () => false));
        if (!runnable) throw new Error(`No runnable Plex Media Scanner at "${layout.scanner}" on this host.`);
        return { path: layout.scanner, user: layout.user, how: explicit.scanner ? "PLEX_SCANNER" : "the Plex package's path" };
      },
      userExists: (user) => hostUserExists(user),
    };
  }
  const container = config.DOCKER_NAME;
  const executor = createDockerExecutor({ dockerHost: settings.dockerHost, clock: systemClock });
  return {
    kind: "docker",
    container,
    endpoint: executor.endpoint,
    ping: () => executor.ping(),
    async inspect() {
      try {
        const info = await executor.inspect(container);
        return { kind: "found", state: info.state, image: info.image };
      } catch (error) {
        if (error instanceof ContainerNotFoundError) return { kind: "missing", running: error.running };
        throw error;
      }
    },
    async locateScanner() {
      const resolved = await resolveLayout({
        preset: config.PLEX_DOCKER_PRESET,
        container,
        explicit,
        fallback: { ...NATIVE_LAYOUT, supportDir: "" },
        probe: executor,
      });
      const found = await executor.stat(container, resolved.layout.scanner);
      if (!found || found.isDirectory) {
        throw new Error(`No Plex Media Scanner at "${resolved.layout.scanner}" in container "${container}" (${resolved.reason}).`);
      }
      return { path: resolved.layout.scanner, user: resolved.layout.user, how: `preset ${resolved.preset}, ${resolved.reason}` };
    },
    async userExists(user) {
      // runc refuses an exec whose User is not in the container's /etc/passwd (exit 126, "unable to find user").
      const result = await executor.exec(container, ["id", "-u"], { user, timeoutMs: 10_000 });
      if (result.exitCode === 0) return true;
      const said = `${result.stdout}${result.stderr}`;
      if (/unable to find user|no matching entries in passwd/i.test(said)) return false;
      return `'id' exited with ${result.exitCode}${said.trim() ? `: ${said.trim().split("\n")[0]}` : ""}`;
    },
  };
}

async function hostUserExists(user: string): Promise<boolean | string> {
  const name = user.split(":")[0] ?? user;
  if (/^\d+$/.test(name)) return true;
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => undefined);
  if (passwd === undefined) return "/etc/passwd cannot be read";
  return passwd.split("\n").some((line) => line.startsWith(`${name}:`));
}
