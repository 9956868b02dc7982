import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * docker-compose.yml and docker-compose.scanner.yml as Compose renders them (`docker compose config`): the published
 * image with the source as the build fallback; the default setup has no Docker socket and no extra group; the scanner
 * override adds both. Rendered, not read as text, so that the merge of the two files is what is checked. Needs the Compose CLI (v2, or v1.29 behind the v2 command), which
 * comes with the Docker engine: without it the tests are skipped loudly, or fail in CI where Docker is required.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DEFAULT_FILE = join(ROOT, "docker-compose.yml");
const SCANNER_FILE = join(ROOT, "docker-compose.scanner.yml");

type Compose = { readonly ok: true; readonly argv: readonly string[] } | { readonly ok: false; readonly reason: string };

function findCompose(): Compose {
  for (const argv of [["docker", "compose"], ["docker-compose"]]) {
    const [command = "", ...rest] = argv;
    const probe = spawnSync(command, [...rest, "version"], { encoding: "utf8", timeout: 20_000 });
    if (probe.status === 0) return { ok: true, argv };
  }
  return { ok: false, reason: "neither `docker compose` nor `docker-compose` runs here" };
}

/** `docker compose config` with only the given variables: no .env and no variable of this shell leaks in. */
function render(compose: readonly string[], files: readonly string[], vars: Record<string, string> = {}): string {
  const [command = "", ...rest] = compose;
  const args = [...rest, "--env-file", envFile, "--project-directory", ROOT, ...files.flatMap((file) => ["-f", file]), "config"];
  const result = spawnSync(command, args, {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...vars },
  });
  if (result.status !== 0) throw new Error(`${compose.join(" ")} config failed: ${result.stderr}`);
  return result.stdout;
}

/** The lines of one top-level service of the rendered YAML (indented under `services:`). */
function service(rendered: string, name: string): string {
  const lines = rendered.split("\n");
  const start = lines.findIndex((line) => line === `  ${name}:`);
  if (start < 0) throw new Error(`no service ${name} in:\n${rendered}`);
  const end = lines.findIndex((line, index) => index > start && /^ {0,2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

const compose = findCompose();
const envFile = join(mkdtempSync(join(tmpdir(), "autoscan-compose-")), "empty.env");
writeFileSync(envFile, "");
afterAll(() => rmSync(dirname(envFile), { recursive: true, force: true }));
const required = process.env.CI === "true" && process.env.AUTOSCAN_REQUIRE_DOCKER === "1";
if (!compose.ok && !required) console.warn(`\n*** SKIPPED compose tests: ${compose.reason} (../shared/tools/docker-sandbox up) ***\n`);
const describeCompose = compose.ok || required ? describe : describe.skip;

describeCompose("docker-compose files, rendered by Compose", () => {
  const argv = (): readonly string[] => {
    if (!compose.ok) throw new Error(`the compose tests are required here but ${compose.reason}`);
    return compose.argv;
  };

  it("runs the published image, with this folder as the build fallback and the image's own HEALTHCHECK", () => {
    const autoscan = service(render(argv(), [DEFAULT_FILE]), "autoscan");
    expect(autoscan).toMatch(/^ {4}image: ghcr\.io\/autoscan\/autoscan:latest$/m);
    // `build:` is what `up` falls back to where the image cannot be pulled (Compose v2), or builds (v1).
    expect(autoscan).toMatch(/^ {4}build:\n {6}context: (.+)$/m);
    expect(/^ {6}context: (.+)$/m.exec(autoscan)?.[1]).toBe(ROOT);
    // A pull_policy would break one of the two: v1 ignores it, and v2's "build" never pulls, "always" never falls back.
    expect(autoscan).not.toMatch(/pull_policy/);
    // Compose v1 refuses healthcheck.start_interval; the image carries the HEALTHCHECK.
    expect(autoscan).not.toMatch(/healthcheck/);
  });

  it("takes another image from AUTOSCAN_IMAGE (a fork's, a version tag), still with the build fallback", () => {
    const autoscan = service(render(argv(), [DEFAULT_FILE], { AUTOSCAN_IMAGE: "ghcr.io/someone/autoscan:1.2.3" }), "autoscan");
    expect(autoscan).toMatch(/^ {4}image: ghcr\.io\/someone\/autoscan:1\.2\.3$/m);
    expect(autoscan).toMatch(/^ {4}build:$/m);
  });

  it("the default setup mounts no Docker socket, adds no group, and runs as PUID/PGID (default 1000)", () => {
    const autoscan = service(render(argv(), [DEFAULT_FILE]), "autoscan");
    expect(autoscan).not.toMatch(/docker\.sock/);
    expect(autoscan).not.toMatch(/group_add/);
    // The image switches to PUID:PGID itself; a compose `user:` would keep it from preparing /config.
    expect(autoscan).not.toMatch(/^\s+user:/m);
    expect(autoscan).toMatch(/PUID: '1000'|PUID: "1000"/);
    expect(autoscan).toMatch(/PGID: '1000'|PGID: "1000"/);
    expect(autoscan).toMatch(/TZ: Etc\/UTC/);
    expect(autoscan).toMatch(/PLEX_LOCAL_URL: http:\/\/plex:32400/);
  });

  it("takes PUID, PGID, TZ and PLEX_LOCAL_URL from .env or the shell", () => {
    const vars = { PUID: "1234", PGID: "2345", TZ: "Europe/Berlin", PLEX_LOCAL_URL: "http://192.168.1.10:32400" };
    const autoscan = service(render(argv(), [DEFAULT_FILE], vars), "autoscan");
    expect(autoscan).toMatch(/PUID: '1234'|PUID: "1234"/);
    expect(autoscan).toMatch(/PGID: '2345'|PGID: "2345"/);
    expect(autoscan).toMatch(/TZ: Europe\/Berlin/);
    expect(autoscan).toMatch(/PLEX_LOCAL_URL: http:\/\/192\.168\.1\.10:32400/);
  });

  it("the scanner override adds the socket, its group, and the scanner method", () => {
    const autoscan = service(render(argv(), [DEFAULT_FILE, SCANNER_FILE], { DOCKER_GID: "994" }), "autoscan");
    expect(autoscan).toMatch(/\/var\/run\/docker\.sock/);
    expect(autoscan).toMatch(/group_add:\n\s+- '?"?994'?"?/);
    expect(autoscan).toMatch(/PLEX_SCAN_METHOD: scanner/);
    expect(autoscan).toMatch(/USE_DOCKER: 'true'|USE_DOCKER: "true"/);
    // The default file's settings survive the merge.
    expect(autoscan).toMatch(/PUID: '1000'|PUID: "1000"/);
    expect(autoscan).toMatch(/\/config/);
  });
});
