import type Docker from "dockerode";
import type { ProcessInfo } from "./command-runner.ts";

/** What autoscan needs to know about the Plex container (for presets and availability). */
export interface ContainerInfo {
  readonly name: string;
  /** The image as the container was created from it (`plexinc/pms-docker:latest`, or an image id). */
  readonly image: string;
  /** The image's repository tags, for when `image` is an id. */
  readonly imageTags: readonly string[];
  /** `running`, `restarting`, `paused`, `exited`, `created`, `dead`. */
  readonly state: string;
  /** The container's configured environment (image ENV plus `-e`). */
  readonly env: Readonly<Record<string, string>>;
}

export interface PathStat {
  readonly name: string;
  readonly mode: number;
  readonly isDirectory: boolean;
  readonly isSymlink: boolean;
  /** Any execute bit set (for a symlink, assume its target is executable). */
  readonly isExecutable: boolean;
}

export async function inspectContainer(docker: Docker, container: string): Promise<ContainerInfo> {
  const info = await docker.getContainer(container).inspect();
  const image = info.Config.Image;
  const imageTags = await docker
    .getImage(info.Image)
    .inspect()
    .then((image) => image.RepoTags ?? [])
    .catch(() => [] as string[]);
  return {
    name: info.Name.replace(/^\//, ""),
    image,
    imageTags,
    state: info.State.Status,
    env: parseEnvList(info.Config.Env ?? []),
  };
}

/** Names of the running containers. */
export async function listRunningContainers(docker: Docker): Promise<string[]> {
  const list = await docker.listContainers();
  return list.map((entry) => (entry.Names[0] ?? entry.Id.slice(0, 12)).replace(/^\//, "")).sort();
}

/**
 * `HEAD /containers/{id}/archive?path=` answers with a base64 JSON stat in `X-Docker-Container-Path-Stat`, or 404.
 * It needs no binary inside the container and works on a stopped one.
 */
export async function statPath(docker: Docker, container: string, path: string): Promise<PathStat | undefined> {
  let response: { headers?: Record<string, string | string[] | undefined>; resume?: () => void };
  try {
    response = (await docker.getContainer(container).infoArchive({ path })) as typeof response;
  } catch (error) {
    if ((error as { statusCode?: unknown }).statusCode !== 404) throw error;
    // A HEAD answer has no body, so a missing path and a missing container both read "404": ask about the container.
    await docker.getContainer(container).inspect();
    return undefined;
  }
  response.resume?.();
  const header = response.headers?.["x-docker-container-path-stat"];
  if (typeof header !== "string") return undefined;
  const stat = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
    name: string;
    mode: number;
    linkTarget?: string;
  };
  // Go's os.FileMode: ModeDir = 1<<31, ModeSymlink = 1<<27, permissions in the low 9 bits.
  const isDirectory = bit(stat.mode, 31);
  const isSymlink = bit(stat.mode, 27);
  return {
    name: stat.name,
    mode: stat.mode,
    isDirectory,
    isSymlink,
    isExecutable: isSymlink || (stat.mode & 0o111) !== 0,
  };
}

/** `GET /containers/{id}/top`: the daemon runs `ps -ef` on its host and keeps the container's processes. */
export async function listContainerProcesses(docker: Docker, container: string): Promise<ProcessInfo[]> {
  const top = (await docker.getContainer(container).top()) as { Titles?: string[]; Processes?: string[][] };
  const titles = top.Titles ?? [];
  const pidAt = titles.indexOf("PID");
  const commandAt = titles.findIndex((title) => title === "CMD" || title === "COMMAND");
  if (pidAt < 0 || commandAt < 0) return [];
  return (top.Processes ?? []).map((row) => ({
    pid: Number(row[pidAt]),
    command: row[commandAt] ?? "",
  }));
}

/** Bit `n` of an unsigned 32-bit mode (JS bitwise operators are signed). */
function bit(mode: number, n: number): boolean {
  return Math.floor(mode / 2 ** n) % 2 === 1;
}

function parseEnvList(list: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of list) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}
