import * as v from "valibot";
import { createArrClient } from "./arr-client.ts";
import type { ArrType } from "./arr-type.ts";
import type { Logger } from "../core/logger.ts";

/**
 * The *arr apps' root folders (`GET {api}/rootfolder`: Sonarr and Radarr on /api/v3, Lidarr and Readarr on /api/v1;
 * each entry's `path` as the app sees it): the paths the apps send under. The console's Libraries page reads them to
 * tell a library folder the apps reach with Plex's own paths (no mapping needed) from one nothing reaches.
 */
const rootFoldersSchema = v.array(v.looseObject({ path: v.string() }));

/** What one app of `ARR` needs to be asked (the config's entry, as the composition root has it). */
export interface ArrAppAddress {
  readonly TYPE: ArrType;
  readonly URL: string;
  readonly API_KEY: string;
  readonly TIMEOUT: number;
}

/** How long a console page waits for an app's answer: a page is not held by an app that is down. */
const PAGE_TIMEOUT_MS = 3_000;

/**
 * Every app's root folders, asked at once; an app that does not answer (or refuses the key) adds none, and says why
 * at debug: the page then judges by the other evidence. `undefined` without apps.
 */
export function arrRootFolders(apps: Readonly<Record<string, ArrAppAddress>>, log: Logger): ((signal?: AbortSignal) => Promise<readonly string[]>) | undefined {
  const entries = Object.entries(apps);
  if (entries.length === 0) return undefined;
  const clients = entries.map(([name, app]) =>
    createArrClient({ name, type: app.TYPE, url: app.URL, apiKey: app.API_KEY, timeoutMs: Math.min(app.TIMEOUT * 1000, PAGE_TIMEOUT_MS), log }),
  );
  return async (signal) => {
    const lists = await Promise.all(
      clients.map(async (client) => {
        try {
          const answer = await client.send("GET", "/rootfolder", undefined, signal);
          return client.readJson(answer, rootFoldersSchema).map((folder) => folder.path);
        } catch (error) {
          log.debug({ app: client.name, err: error }, `Could not read ${client.name}'s root folders`);
          return [];
        }
      }),
    );
    return [...new Set(lists.flat().filter((path) => path.trim() !== ""))];
  };
}
