import { TargetConfigError } from "../../core/errors.ts";
import { createLibraryServerTarget, type LibraryServerConfig, type LibraryServerTarget } from "../library-server-target.ts";
import { createMediaHttp, MediaHttpError, type MediaRequest, type MediaResponse } from "../media-http.ts";
import { parseEmbyLibraries, parseEmbyLibraryRoots } from "../media-wire-schemas.ts";
import { embyUpdateTypeOf } from "../update-type.ts";

/**
 * An Emby server (integrations.md §4.2): `POST /Library/Media/Updated` with `UpdateType: "Created"` (`Deleted` when
 * every request behind the folder was a delete), the `X-Emby-Token` header, libraries from
 * `GET /Library/SelectableMediaFolders` (`SubFolders[].Path`), `GET /System/Info` as the availability probe; with the
 * TargetedScan plugin, `POST /Library/ScanPath` instead (scan-path.ts; Emby's build always answers 200, the outcome
 * in `Status`).
 * Whether files landed is asked by walking the library from its top-level `Id` with `GET /Items?ParentId=`
 * (library-lookup.ts), first `landedSettleMs` after the scan.
 *
 * Emby servers (and the proxies in front of them) serve the API without the `/emby` prefix, with it, or both.
 * Each call tries the form that worked last (without the prefix first); a 404 tries the other form once, and the
 * form that answers is remembered for this server.
 */
export type EmbyTargetOptions = LibraryServerConfig;

type Prefix = "" | "/emby";

export function createEmbyTarget(options: EmbyTargetOptions): LibraryServerTarget {
  const { name } = options;
  const label = `Emby '${name}'`;
  const authKey = options.tokenKey ?? `TARGETS.${name}.TOKEN`;
  const urlKey = options.urlKey ?? `TARGETS.${name}.URL`;
  const log = options.log.child({ component: "TARGET" });
  const fields = { target: name };
  const http = createMediaHttp({
    url: options.url,
    label,
    authKey,
    headers: { "X-Emby-Token": options.token },
    secrets: [options.token],
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  let prefix: Prefix = "";

  /** One call in the form that worked last; on 404, the other form once, remembered when it answers. */
  async function call(method: "GET" | "POST", route: string, request: MediaRequest = {}): Promise<MediaResponse> {
    const first = prefix;
    try {
      return await http.request(method, `${first}${route}`, request);
    } catch (error) {
      if (!(error instanceof MediaHttpError && error.status === 404)) throw error;
    }
    const other: Prefix = first === "" ? "/emby" : "";
    try {
      const answer = await http.request(method, `${other}${route}`, request);
      if (prefix !== other) {
        prefix = other;
        log.info({ ...fields, prefix: other || "(none)" }, `${label} serves its API ${other ? "under /emby" : "without the /emby prefix"}; using that from now on`);
      }
      return answer;
    } catch (error) {
      if (error instanceof MediaHttpError && error.status === 404) {
        throw new TargetConfigError(`${label} answered 404 to ${method} ${route} with and without /emby at ${http.shownUrl}: check ${urlKey}`, { cause: error });
      }
      throw error;
    }
  }

  return createLibraryServerTarget({
    config: options,
    kind: "emby",
    label,
    authKey,
    log,
    call,
    librariesRoute: "/Library/SelectableMediaFolders",
    parseLibraries: parseEmbyLibraries,
    parseRoots: parseEmbyLibraryRoots,
    updateType: embyUpdateTypeOf,
  });
}
