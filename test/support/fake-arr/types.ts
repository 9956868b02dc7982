import type { IncomingMessage } from "node:http";

/**
 * The fake *arr's public API (re-exported by ../fake-arr.ts): its options, the record inputs `add…` take, an
 * injected answer, the request log and the handle `startFakeArr` returns.
 */
export type FakeArrType = "sonarr" | "radarr" | "lidarr" | "readarr";

export interface FakeArrOptions {
  readonly type: FakeArrType;
  /** Sonarr only: v4 (ASP.NET Core, default) or v3 (Nancy). */
  readonly sonarrVersion?: "v3" | "v4";
  readonly apiKey?: string;
  /** The app's root folder: relative paths given to `add…` are under it. Default `/tv`, `/movies`, `/music`, `/books`. */
  readonly pathRoot?: string;
  /** The root folders `GET …/rootfolder` lists (as the apps write them, with a trailing slash). Default: `pathRoot`. */
  readonly rootFolders?: readonly string[];
  /** The version `system/status` and `X-Application-Version` report. */
  readonly version?: string;
}

export interface FakeArrRequest {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
  /** The request body as text ("" for none). */
  readonly body: string;
}

/** A connection put straight into the app's database (no test is run): what the user made, or an old one. */
export interface FakeNotificationInput {
  /** Default "autoscan". */
  readonly name?: string;
  /** Default "Webhook". */
  readonly implementation?: string;
  readonly url?: string;
  /** 1 = POST (default), 2 = PUT. */
  readonly method?: number;
  readonly username?: string;
  readonly password?: string;
  /** Events on (`onDownload: true` …); the rest off. An event the app does not have is an error. */
  readonly events?: Readonly<Record<string, boolean>>;
  readonly tags?: readonly number[];
}

/** A connection as the app stores it (the password in clear: what the app keeps). */
export interface FakeNotification {
  readonly id: number;
  readonly name: string;
  readonly implementation: string;
  readonly url: string | null;
  readonly method: number;
  readonly username: string | null;
  readonly password: string | null;
  readonly events: Readonly<Record<string, boolean>>;
  /** The app's `Enable`: any event on. */
  readonly enabled: boolean;
  readonly tags: readonly number[];
  /** Held back after failures (listed by the health check). */
  readonly failing: boolean;
}

/** One Test event the fake app sent (at a create, an update or `…/notification/test`). */
export interface FakeNotificationTest {
  /** The saved connection's id; undefined for one not saved yet. */
  readonly id: number | undefined;
  readonly url: string;
  readonly method: string;
  readonly ok: boolean;
  /** The answer's status; undefined when nothing answered. */
  readonly status: number | undefined;
}

/** When a record was written: a Date, an ISO string or ms since the epoch. Default: now. */
export type FakeDate = Date | string | number;

export interface FakeImport {
  /** The imported file (absolute, or relative to `pathRoot`). */
  readonly path: string;
  readonly date?: FakeDate;
  /** `data.fileId`; default: a new id per call. */
  readonly fileId?: number;
  readonly downloadId?: string;
  /** The file in the download folder (`data.droppedPath`). */
  readonly droppedPath?: string;
  /** Sonarr and Lidarr: records for this one file (a multi-episode file). Default 1. */
  readonly items?: number;
}
export interface FakeRename {
  readonly from: string;
  readonly to: string;
  readonly date?: FakeDate;
  readonly fileId?: number;
}
export interface FakeDelete {
  readonly path: string;
  /** `MissingFromDisk`, `Manual` (default), `Upgrade`, … */
  readonly reason?: string;
  readonly date?: FakeDate;
}
export interface FakeGrab {
  readonly title?: string;
  readonly downloadId?: string;
  readonly date?: FakeDate;
}
/** Any other event, by its camelCase name (`downloadFailed`, `trackFileRetagged` …). */
export interface FakeOther {
  readonly eventType: string;
  readonly sourceTitle?: string;
  readonly data?: Readonly<Record<string, string>>;
  readonly downloadId?: string;
  readonly date?: FakeDate;
}

export type FakeRecordInput =
  | ({ readonly kind: "import" } & FakeImport)
  | ({ readonly kind: "rename" } & FakeRename)
  | ({ readonly kind: "delete" } & FakeDelete)
  | ({ readonly kind: "grab" } & FakeGrab)
  | ({ readonly kind: "other" } & FakeOther);

export interface FakeReply {
  readonly status: number;
  readonly body?: string;
  readonly contentType?: string;
}

export interface FakeArr {
  readonly url: string;
  readonly port: number;
  readonly type: FakeArrType;
  readonly appName: string;
  readonly apiRoot: string;
  readonly apiKey: string;
  readonly version: string;
  readonly requests: FakeArrRequest[];
  /** How many records the history holds. */
  readonly size: number;
  /** Returns the new records' ids (more than one for a multi-episode Sonarr file or `items`). */
  addImport(input: FakeImport): number[];
  addRename(input: FakeRename): number;
  addDelete(input: FakeDelete): number;
  addGrab(input?: FakeGrab): number;
  addOther(input: FakeOther): number;
  /** `n` records made by `make(index)`; cheap enough for 100,000. Returns the first and last ids. */
  addMany(n: number, make: (index: number) => FakeRecordInput): { first: number; last: number };
  /** Drops every record of the series/movie/artist/author whose folder holds `path` (what deleting the item does). */
  deleteItem(path: string): number;
  /** 503 `{"errorMessage":"<App> is starting up, please try again later"}` to every request while true. */
  setStarting(starting: boolean): void;
  /** true: the port is closed (connection refused) and open connections are cut; false: it listens again. */
  setDown(down: boolean): Promise<void>;
  setKey(apiKey: string): void;
  /** true: requests are taken but never answered (a hung app), until false or close. */
  setHang(hang: boolean): void;
  /** History pages from `page` on are taken but never answered (a read cut in the middle); undefined: answered. */
  hangFromPage(page: number | undefined): void;
  /** The next `times` requests whose `METHOD /path` matches get this answer instead (after the key check). */
  answerNext(match: RegExp, reply: FakeReply, times?: number): void;
  /** The connections (notifications) the app holds, in id order. */
  readonly notifications: readonly FakeNotification[];
  /** The Test events the app sent, oldest first. */
  readonly notificationTests: readonly FakeNotificationTest[];
  /** Puts a connection in the app's database as it is; returns its id. */
  addNotification(input: FakeNotificationInput): number;
  /** Holds a connection back as after failed deliveries (the health list names it), or ends the hold. Not Sonarr v3. */
  setNotificationFailing(id: number, failing: boolean): void;
  /** Another entry on the health list (`{source: "UpdateCheck", type: "warning", message: "…"}`). */
  addHealth(entry: { readonly source: string; readonly type: string; readonly message: string }): void;
  close(): Promise<void>;
}
