import { spawn, spawnSync } from "node:child_process";
import type { Capability } from "./faults/describe-faults.ts";
import { CLI_MAIN, childEnv, type CliOptions, type RunningCli } from "./run-cli.ts";

/**
 * A network where a server's packets vanish, as behind a firewall that drops them or at a LAN address no machine
 * has: a network namespace of the child's own (`unshare --net`), with only `lo` up, `SILENT_HOST` added to it, and
 * every TCP SYN to `SILENT_HOST` (any port) dropped (iptables). A connection there never completes and never
 * fails: the caller's own timeout is the only end. Nothing leaves the machine; the address (198.18.0.0/15, kept for
 * network tests) exists inside that namespace only. Needs root, namespaces and iptables (Debian: iptables, iproute2).
 */
export const SILENT_HOST = "198.18.0.2";

const SETUP = [
  "ip link set lo up",
  `ip addr add ${SILENT_HOST}/32 dev lo`,
  `iptables -A INPUT -p tcp -d ${SILENT_HOST} --syn -j DROP`,
].join(" && ");

/** Whether the namespace can be made here, and why not. */
export function droppingNamespace(): Capability {
  if (process.platform !== "linux") return { ok: false, reason: "network namespaces are Linux's" };
  if (process.getuid?.() !== 0) return { ok: false, reason: "making a network namespace needs root" };
  const probe = spawnSync("unshare", ["--net", "sh", "-c", SETUP], { encoding: "utf8", timeout: 10_000 });
  if (probe.error) return { ok: false, reason: `unshare cannot run: ${probe.error.message}` };
  if (probe.status !== 0) return { ok: false, reason: `cannot set up a network namespace that drops packets (unshare --net, ip, iptables): ${probe.stderr.trim()}` };
  return { ok: true };
}

/** `autoscan <args>` in a fresh dropping namespace, started at once (as run-cli.ts's `startCli`). */
export function startCliInDroppingNamespace(args: readonly string[], options: Pick<CliOptions, "env" | "timeoutMs"> = {}): RunningCli {
  // `exec`: the child's pid is autoscan's own, so a signal to it reaches autoscan.
  const child = spawn("unshare", ["--net", "sh", "-c", `${SETUP} && exec "$@"`, "sh", process.execPath, CLI_MAIN, ...args], {
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 15_000);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
  return { process: child, stdout: () => out, stderr: () => err, exited };
}
