import { createPathMapper, type PathMapper, type PathMapperOptions } from "./mapping.ts";

/**
 * The process's one path mapper, replaceable while it runs (a config reload): every holder calls through it, so the
 * next request, file check or Drive change uses the new mappings; a call in progress finishes with the old ones.
 */
export interface LivePathMapper extends PathMapper {
  replace(options: PathMapperOptions): void;
}

export function createLivePathMapper(options: PathMapperOptions): LivePathMapper {
  let current = createPathMapper(options);
  return {
    toServer: (path) => current.toServer(path),
    localForms: (serverPath) => current.localForms(serverPath),
    toDrive: (serverPath) => current.toDrive(serverPath),
    replace(next) {
      current = createPathMapper(next);
    },
  };
}
