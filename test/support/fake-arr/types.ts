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
  /** The version `system/status` and `X-Application-Version` report. */
  readonly version?: string;
}

export interface FakeArrRequest {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
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
  close(): Promise<void>;
}
