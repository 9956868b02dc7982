import type { Logger } from "../core/logger.ts";
import type { DriveApi, SharedDrive } from "./drive-api.ts";
import { MY_DRIVE_NAME } from "./path-cache.ts";

/**
 * The change feeds to poll: My Drive's (the user feed) and one per shared drive. Shared drives are named in
 * `CLOUD.TEAMDRIVES` as plex_autoscan did (exact names), and ids (`0A…`) are accepted too. Each feed has its own page
 * token: a token from `getStartPageToken(driveId=X)` is only valid with `changes?driveId=X`.
 */
export interface Feed {
  /** Key of its page token in the store. */
  readonly key: string;
  /** Undefined for My Drive. */
  readonly driveId?: string;
  /** As users read it: `My Drive` or the shared drive's real name. */
  readonly name: string;
}

export const MY_DRIVE_FEED: Feed = { key: "my-drive", name: MY_DRIVE_NAME };

export async function resolveFeeds(
  api: DriveApi,
  wanted: { readonly myDrive: boolean; readonly sharedDrives: readonly string[] },
  log: Logger,
): Promise<Feed[]> {
  const feeds: Feed[] = wanted.myDrive ? [MY_DRIVE_FEED] : [];
  const names = [...new Set(wanted.sharedDrives.map((name) => name.trim()).filter(Boolean))];
  if (names.length === 0) return feeds;
  const visible = await api.listDrives();
  for (const name of names) {
    const drive = visible.find((d) => d.id === name) ?? visible.find((d) => d.name === name) ?? (await byId(api, name));
    if (!drive) {
      const known = visible.map((d) => `'${d.name}' (${d.id})`).join(", ") || "none";
      log.warn(
        { drive: name },
        `Shared drive '${name}' was not found; the drives these credentials can see: ${known}. Check CLOUD.TEAMDRIVES (exact names or ids) or add the account as a member of the drive.`,
      );
      continue;
    }
    if (!feeds.some((feed) => feed.driveId === drive.id)) feeds.push(sharedDriveFeed(drive));
  }
  return feeds;
}

export function sharedDriveFeed(drive: SharedDrive): Feed {
  return { key: `drive:${drive.id}`, driveId: drive.id, name: drive.name };
}

/** A drive hidden from `drives.list` (or listed on a later page Google never sent) can still be fetched by id. */
async function byId(api: DriveApi, name: string): Promise<SharedDrive | undefined> {
  return /^0A[\w-]{8,}$/.test(name) ? api.getDrive(name) : undefined;
}
