import type { HttpAnswer } from "../../http/http-call.ts";
import type { LibraryFolder } from "../../targets/library-folders.ts";
import { createAudiobookshelfClient } from "../../targets/audiobookshelf/client.ts";
import { describeRoutes, libraryFolders, notAdminFix } from "../../targets/audiobookshelf/libraries.ts";
import { API_KEYS_SINCE, takesApiKeys } from "../../targets/audiobookshelf/version.ts";
import { isAdminType, parseAbsStatus } from "../../targets/audiobookshelf/wire-schemas.ts";

/**
 * The doctor's view of an Audiobookshelf target: `GET /status` (no key) says it is Audiobookshelf and its version,
 * which must take API keys (2.26.0 or newer); the key is checked with `POST /api/authorize` as the target reads it (its
 * user must be an admin or root: the scans answer 403 to the others); the libraries come from `GET /api/libraries`,
 * each said with how new files reach it (the watcher or a library scan).
 */

/** A key check that failed for a reason the generic words do not cover: what is wrong, and the fix. */
export class KeyCheckFailure extends Error {
  override name = "KeyCheckFailure";
  readonly fix: string;
  constructor(detail: string, fix: string) {
    super(detail);
    this.fix = fix;
  }
}

export interface AbsDoctorProbe {
  reach(signal: AbortSignal): Promise<{ readonly server?: string; readonly foreign?: string }>;
  checkKey(signal: AbortSignal): Promise<string | undefined>;
  listLibraries(signal: AbortSignal): Promise<readonly LibraryFolder[]>;
}

export function audiobookshelfDoctorProbe(
  name: string,
  target: { readonly URL: string; readonly API_KEY: string },
  timeoutMs: number,
  look: (path: string, signal: AbortSignal) => Promise<HttpAnswer>,
): AbsDoctorProbe {
  const keySetting = `TARGETS.${name}.API_KEY`;
  const client = createAudiobookshelfClient({ url: target.URL, apiKey: target.API_KEY, label: `Audiobookshelf '${name}'`, keySetting, urlSetting: `TARGETS.${name}.URL`, timeoutMs });
  let version: string | undefined;
  return {
    async reach(signal) {
      const answer = await look("/status", signal);
      const status = answer.status === 200 ? parseAbsStatus(answer.body) : undefined;
      if (!status) return { foreign: `it answered ${answer.status} to GET /status, not as Audiobookshelf does` };
      version = status.version;
      return { server: `Audiobookshelf ${version ?? "(version not said)"}` };
    },
    async checkKey(signal) {
      if (version !== undefined && takesApiKeys(version) === false) {
        throw new KeyCheckFailure(
          `Audiobookshelf ${version} takes no API keys (they came in ${API_KEYS_SINCE}).`,
          `Upgrade Audiobookshelf to ${API_KEYS_SINCE} or newer, then create an API key of an admin user (Settings → API Keys → Add API Key) and put it in ${keySetting}.`,
        );
      }
      const who = await client.authorize(signal);
      if (!isAdminType(who.userType)) {
        throw new KeyCheckFailure(
          `Audiobookshelf accepted ${keySetting}, but it acts as '${who.username}' (account type '${who.userType}'): Audiobookshelf refuses scans (403) from anyone but admin and root users.`,
          notAdminFix(keySetting),
        );
      }
      const routes = describeRoutes(libraryFolders(await client.libraries(signal), who.watcherDisabled), who.watcherDisabled);
      return [`acts as ${who.userType} '${who.username}'`, ...(routes ? [routes] : [])].join("; ");
    },
    listLibraries: async (signal) => (await client.libraries(signal)).flatMap((library) => library.folders.map((path) => ({ library: library.name, path }))),
  };
}
