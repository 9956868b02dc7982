import type { PathMapper, PathMappings } from "./mapping.ts";

/**
 * A path as autoscan sees it on its own disk → the media server's form: back through `SERVER_FILE_EXIST_PATH_MAPPINGS`
 * (key = the local form, first value = the server's), longest key first on whole path segments, then through
 * `SERVER_PATH_MAPPINGS` as any request. A path no key holds is taken to be the server's own (autoscan sees the media
 * where Plex does). For the folder watcher, whose changes are local paths.
 */
export function createLocalToServer(existMappings: PathMappings, mapper: Pick<PathMapper, "toServer">): (localPath: string) => string {
  const forms = Object.entries(existMappings)
    .flatMap(([local, servers]) => (servers[0] === undefined ? [] : [{ local: withSlash(local), server: withSlash(servers[0]) }]))
    .sort((a, b) => b.local.length - a.local.length);
  return (localPath) => {
    const form = forms.find((f) => `${localPath}/`.startsWith(f.local));
    const server = form ? `${form.server}${localPath.slice(form.local.length)}`.replace(/\/$/, "") : localPath;
    return mapper.toServer(server).path;
  };
}

const withSlash = (path: string): string => (path.endsWith("/") ? path : `${path}/`);
