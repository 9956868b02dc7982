import { existsSync, readFileSync } from "node:fs";

/** Whether autoscan runs inside a container: Docker writes /.dockerenv, Podman /run/.containerenv. */
export function isInContainer(): boolean {
  return existsSync("/.dockerenv") || existsSync("/run/.containerenv");
}

/**
 * Whether this container's main process (PID 1) is `autoscan server`: then a command run beside it (`docker exec
 * autoscan autoscan doctor`) must find it answering. False outside a container's namespace, and for a one-off
 * container (`docker compose run --rm autoscan doctor`), whose PID 1 is the command itself.
 */
export function isContainerServerRunning(): boolean {
  if (process.pid === 1) return false;
  try {
    const argv = readFileSync("/proc/1/cmdline", "utf8").split("\0");
    return argv.some((arg) => arg.endsWith("/cli/main.js")) && argv.includes("server");
  } catch {
    return false;
  }
}
