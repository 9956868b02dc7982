import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The Compose CLI, to render compose files as Compose itself reads them (`docker compose config`): v2, or v1.29 behind
 * the v2 command (../shared/tools/docker-sandbox). Rendered with no .env and none of this shell's variables, so a
 * test sees only what it passes.
 */
export type Compose = { readonly ok: true; readonly argv: readonly string[] } | { readonly ok: false; readonly reason: string };

export function findCompose(): Compose {
  for (const argv of [["docker", "compose"], ["docker-compose"]]) {
    const [command = "", ...rest] = argv;
    const probe = spawnSync(command, [...rest, "version"], { encoding: "utf8", timeout: 20_000 });
    if (probe.status === 0) return { ok: true, argv };
  }
  return { ok: false, reason: "neither `docker compose` nor `docker-compose` runs here" };
}

/** `docker compose --project-directory <dir> -f … config` with only `vars` in the environment. */
export function renderCompose(compose: readonly string[], projectDir: string, files: readonly string[], vars: Record<string, string> = {}): string {
  const [command = "", ...rest] = compose;
  const envDir = mkdtempSync(join(tmpdir(), "autoscan-compose-"));
  const envFile = join(envDir, "empty.env");
  writeFileSync(envFile, "");
  try {
    const args = [...rest, "--env-file", envFile, "--project-directory", projectDir, ...files.flatMap((file) => ["-f", file]), "config"];
    const result = spawnSync(command, args, {
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...vars },
    });
    if (result.status !== 0) throw new Error(`${compose.join(" ")} config failed: ${result.stderr}`);
    return result.stdout;
  } finally {
    rmSync(dirname(envFile), { recursive: true, force: true });
  }
}

/** The lines of one top-level service of the rendered YAML (indented under `services:`). */
export function composeService(rendered: string, name: string): string {
  const lines = rendered.split("\n");
  const start = lines.findIndex((line) => line === `  ${name}:`);
  if (start < 0) throw new Error(`no service ${name} in:\n${rendered}`);
  const end = lines.findIndex((line, index) => index > start && /^ {0,2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}
