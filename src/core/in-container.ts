import { existsSync } from "node:fs";

/** Whether autoscan runs inside a container: Docker writes /.dockerenv, Podman /run/.containerenv. */
export function isInContainer(): boolean {
  return existsSync("/.dockerenv") || existsSync("/run/.containerenv");
}
