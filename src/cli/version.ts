import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where autoscan is installed (the folder holding package.json); src/cli and dist/cli are both two levels down. */
export const INSTALL_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export function readVersion(): string {
  const pkg = JSON.parse(readFileSync(join(INSTALL_DIR, "package.json"), "utf8")) as { version?: string };
  return pkg.version ?? "0.0.0";
}
