import type { Logger } from "../core/logger.ts";
import { normalizePath, normalizeSeparators, withTrailingSlash } from "../paths/normalize.ts";

/**
 * `RCLONE.RC_CACHE_REFRESH`: before the file check of a Google Drive scan, ask rclone's remote control to re-read the
 * folder (`vfs/refresh`), so the mount shows a file that Drive already has. rclone answers per folder: `"OK"`, or an
 * error such as `file does not exist` when its cache does not know the folder yet; then the parent is refreshed
 * instead, walking up (plex_autoscan's walk; its `cache/expire` step is gone because rclone removed the cache
 * backend). Never throws: a refresh that fails only costs the file check a retry.
 */
export interface RcRefreshOptions {
  /** `http://localhost:5572`; `http://user:pass@host:5572` sends Basic credentials. */
  readonly rcUrl: string;
  /** `FILE_EXISTS_TO_REMOTE_MAPPINGS`: key = path inside the remote (`Media/`), values = local mount prefixes. */
  readonly remoteMappings: Readonly<Record<string, readonly string[]>>;
  readonly log: Logger;
  readonly fetch?: typeof fetch;
  readonly timeoutMs?: number;
}

/** The hook the dispatcher calls with the local path it is about to check. */
export type RefreshBeforeCheck = (localPath: string, signal?: AbortSignal) => Promise<void>;

const MAX_LEVELS = 32;

export function createRcRefresher(options: RcRefreshOptions): RefreshBeforeCheck {
  const { endpoint, authorization } = parseRcUrl(options.rcUrl);
  const doFetch = options.fetch ?? fetch;
  const log = options.log;
  const mappings = Object.entries(options.remoteMappings).flatMap(([remote, locals]) =>
    locals.map((local) => ({ local: withTrailingSlash(normalizePath(local)), remote: withTrailingSlash(normalizePath(remote)) })),
  );
  mappings.sort((a, b) => b.local.length - a.local.length);

  async function call(path: string, body: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const response = await doFetch(new URL(path, endpoint), {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) throw new Error(typeof json.error === "string" ? json.error : `HTTP ${response.status}`);
    return json;
  }

  /** `OK`, rclone's per-folder error text, or a thrown error for the whole call. */
  async function refresh(dir: string, fs: string | undefined, signal?: AbortSignal): Promise<string> {
    const body: Record<string, string> = dir ? { dir } : {};
    if (fs) body.fs = fs;
    const answer = await call("vfs/refresh", body, signal);
    const result = (answer.result ?? {}) as Record<string, unknown>;
    const value = result[dir] ?? Object.values(result)[0];
    return typeof value === "string" ? value : "no answer";
  }

  /** The deepest folder some mount knows: each level is tried on every mount before going up. */
  async function walk(remoteDir: string, mounts: readonly (string | undefined)[], signal?: AbortSignal): Promise<string | undefined> {
    let dir = remoteDir;
    for (let level = 0; level < MAX_LEVELS; level++) {
      for (const fs of mounts) {
        const answer = await refresh(dir, fs, signal);
        if (answer === "OK") return dir;
        log.debug({ dir, fs, answer }, "rclone does not know this folder yet");
      }
      if (!dir) return undefined;
      dir = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
    }
    return undefined;
  }

  return async (localPath, signal) => {
    const remotePath = toRemote(localPath, mappings);
    if (remotePath === undefined) {
      log.debug({ path: localPath }, "No RCLONE.RC_CACHE_REFRESH.FILE_EXISTS_TO_REMOTE_MAPPINGS entry for this path; no rclone refresh");
      return;
    }
    const start = remotePath.includes("/") ? remotePath.slice(0, remotePath.lastIndexOf("/")) : "";
    try {
      let refreshed: string | undefined;
      try {
        refreshed = await walk(start, [undefined], signal);
      } catch (error) {
        // With several mounts rclone needs to be told which one: try the VFSes it lists.
        if (!/more than one VFS|need "?fs"?/i.test((error as Error).message)) throw error;
        const list = await call("vfs/list", {}, signal);
        const vfses = Array.isArray(list.vfses) ? list.vfses.filter((fs): fs is string => typeof fs === "string") : [];
        refreshed = await walk(start, vfses, signal);
      }
      if (refreshed === undefined) log.warn({ path: localPath, remote: start }, "rclone could not refresh any folder above this path");
      else log.info({ path: localPath }, `Refreshed rclone's directory cache for '${refreshed || "/"}'`);
    } catch (error) {
      log.warn({ path: localPath, err: error }, "rclone remote control refresh failed; checking the file anyway");
    }
  };
}

/**
 * The local path in the remote's form. Prefixes are compared in NFC; the rest of the path keeps its own bytes, since
 * the remote names files byte for byte as the mount does.
 */
function toRemote(localPath: string, mappings: readonly { local: string; remote: string }[]): string | undefined {
  const match = mappings.find((m) => withTrailingSlash(normalizePath(localPath)).startsWith(m.local));
  if (!match) return undefined;
  const segments = match.local.split("/").length - 1;
  const rest = normalizeSeparators(localPath).split("/").slice(segments).join("/");
  return (match.remote + rest).replace(/^\/+/, "").replace(/\/+$/, "");
}

/** Splits `http://user:pass@host:port/` into the address and a Basic header (fetch refuses credentials in a URL). */
export function parseRcUrl(raw: string): { endpoint: string; authorization?: string } {
  const url = new URL(raw.endsWith("/") ? raw : `${raw}/`);
  if (!url.username && !url.password) return { endpoint: url.href };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = "";
  url.password = "";
  return { endpoint: url.href, authorization: `Basic ${Buffer.from(credentials).toString("base64")}` };
}
