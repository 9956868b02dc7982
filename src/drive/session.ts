import { ConfigError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { ScanSink } from "../core/scan.ts";
import type { PageOutcome, PageStats } from "./change-processor.ts";
import type { DriveChange, DriveApi } from "./drive-api.ts";
import type { DriveStateStore } from "./drive-store.ts";
import { resolveFeeds, type Feed } from "./feeds.ts";
import { GoogleCallError } from "./google-retry.ts";
import { createPathCache, MY_DRIVE_NAME, type PathCache } from "./path-cache.ts";
import { checkGrantedScope, requiredScope } from "./scope.ts";

/** An authenticated Drive API plus what is known about the credentials behind it. */
export interface DriveConnection {
  readonly api: DriveApi;
  /** The scopes the credentials carry, when known (token response, rclone's `scope`, a service account's request). */
  readonly grantedScope?: string;
  /** For the start-up line: `OAuth client 1234….apps.googleusercontent.com`, `service account x@y`, `rclone remote gdrive:`. */
  readonly description: string;
  /** Shared drives the credentials themselves name (an rclone remote's `team_drive`), watched as well. */
  readonly extraSharedDrives?: readonly string[];
  /** When the current access token expires (ms since the epoch), if the client knows; read on demand (console). */
  readonly tokenExpiresAt?: () => number | undefined;
}

export type PageReport = (feedName: string, changes: number, stats: PageStats, scanned: readonly string[]) => void;

/** A connected monitor: validated credentials, resolved feeds, the cache loaded from the store. */
export interface Session {
  readonly feeds: readonly Feed[];
  pollFeed(feed: Feed, sink: ScanSink, report: PageReport): Promise<void>;
  clearCache(): Promise<void>;
}

export interface SessionOptions {
  readonly connection: DriveConnection;
  readonly store: DriveStateStore;
  readonly wanted: { readonly myDrive: boolean; readonly sharedDrives: readonly string[] };
  readonly makeProcessor: (cache: PathCache) => { process(changes: readonly DriveChange[]): Promise<PageOutcome> };
  readonly log: Logger;
}

const ROOT_KEY = "my_drive_root_id";

export async function openSession(options: SessionOptions): Promise<Session> {
  const { connection, store, log } = options;
  const api = connection.api;
  await api.getStartPageToken();
  log.info({ credentials: connection.description }, "Google Drive access token was successfully validated.");
  const wantsShared = options.wanted.sharedDrives.length > 0 || (connection.extraSharedDrives?.length ?? 0) > 0;
  assertScope(connection.grantedScope, wantsShared);

  const wanted = {
    myDrive: options.wanted.myDrive,
    sharedDrives: [...options.wanted.sharedDrives, ...(connection.extraSharedDrives ?? [])],
  };
  const feeds = await resolveFeeds(api, wanted, log);
  const shared = feeds.filter((feed) => feed.driveId);
  if (wanted.sharedDrives.length) log.info(`Loaded ${shared.length} shared drive(s): ${shared.map((f) => f.name).join(", ")}`);
  const rootId = store.meta(ROOT_KEY) ?? (await api.getFile("root"))?.id;
  if (rootId && !store.meta(ROOT_KEY)) await store.commit({ meta: { [ROOT_KEY]: rootId } });

  const cache = createPathCache({ entries: store.entries(), lookup: api, myDriveRootId: rootId });
  const seedRoots = async (): Promise<void> => {
    if (rootId) cache.put(rootId, { name: MY_DRIVE_NAME, folder: true });
    for (const feed of shared) if (feed.driveId) cache.put(feed.driveId, { name: feed.name, folder: true });
    await store.commit({ diff: cache.commit() });
  };
  await seedRoots();
  const processor = options.makeProcessor(cache);

  return {
    feeds,
    async pollFeed(feed, sink, report) {
      let token = store.pageToken(feed.key);
      if (token === undefined) {
        token = await api.getStartPageToken(feed.driveId);
        await store.commit({ pageTokens: { [feed.key]: token } });
        log.info({ drive: feed.name }, `Watching changes of '${feed.name}' from now on (earlier history is not replayed).`);
        return;
      }
      for (;;) {
        const page = await api.listChanges(token, feed.driveId);
        // A page carries either nextPageToken (more follow) or newStartPageToken (the last one), never both.
        const next = page.nextPageToken ?? page.newStartPageToken;
        if (!next) throw new GoogleCallError("changes.list", { kind: "other", detail: "the answer carries no page token" });
        let outcome: PageOutcome;
        try {
          outcome = await processor.process(page.changes);
          if (outcome.requests.length) await sink(outcome.requests);
        } catch (error) {
          cache.rollback(); // the page will be read again; its files must look new again.
          throw error;
        }
        await store.commit({ diff: cache.commit(), pageTokens: { [feed.key]: next } });
        report(feed.name, page.changes.length, outcome.stats, outcome.requests.map((r) => r.receivedPath ?? r.path));
        if (page.newStartPageToken !== undefined) return;
        token = next;
      }
    },
    async clearCache() {
      await store.clearItems();
      cache.clear();
      await seedRoots();
    },
  };
}

function assertScope(granted: string | undefined, sharedDrives: boolean): void {
  if (granted === undefined) return;
  const check = checkGrantedScope(granted, { sharedDrives });
  if (!check.ok) {
    throw new ConfigError(
      `Google Drive credentials lack a scope: ${check.reason}. Run \`autoscan authorize\` again (it asks for ${requiredScope({ sharedDrives })}), or give the rclone remote or service account that scope.`,
    );
  }
}
