import { drive as createDriveClient } from "@googleapis/drive";
import type { OAuth2Client } from "google-auth-library";
import * as v from "valibot";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { GoogleCallError, withGoogleRetry, type RetryPolicy } from "./google-retry.ts";
import { withTokenRenewal, type TokenRenewal } from "./token-renewal.ts";

/**
 * The five Drive v3 calls the monitor makes, through the real client library, with retries, one token renewal on a
 * 401 (token-renewal.ts) and every answer validated (it is outside input). Quirks handled here (docs: ../shared/reference/integrations.md §1):
 * `size` is a JSON string; removed changes carry no `file`; shared-drive items need `supportsAllDrives=true`
 * (`files.get` answers 404 without it); a per-drive feed needs `driveId` with `includeItemsFromAllDrives`.
 */
export interface DriveFile {
  readonly id: string;
  readonly name: string;
  readonly mimeType?: string;
  readonly parents?: readonly string[];
  readonly trashed?: boolean;
  readonly driveId?: string;
  readonly md5Checksum?: string;
  /** Bytes (Drive sends a string; parsed here). */
  readonly size?: number;
}

export interface DriveChange {
  readonly changeType?: string;
  readonly removed?: boolean;
  readonly fileId?: string;
  readonly driveId?: string;
  readonly file?: DriveFile;
  readonly drive?: { readonly id: string; readonly name?: string };
}

export interface ChangePage {
  readonly changes: readonly DriveChange[];
  readonly nextPageToken?: string;
  readonly newStartPageToken?: string;
  /** Entries that failed validation and were skipped. */
  readonly malformed: number;
}

export interface SharedDrive {
  readonly id: string;
  readonly name: string;
}

export interface DriveApi {
  getStartPageToken(driveId?: string): Promise<string>;
  listChanges(pageToken: string, driveId?: string): Promise<ChangePage>;
  /** `undefined` when Drive answers 404 (gone, or not visible to these credentials). */
  getFile(fileId: string): Promise<DriveFile | undefined>;
  getDrive(driveId: string): Promise<SharedDrive | undefined>;
  listDrives(): Promise<SharedDrive[]>;
}

export interface DriveApiOptions {
  readonly auth: OAuth2Client;
  /** How `auth` gets a new access token when Drive refuses the current one (401). */
  readonly renewal: TokenRenewal;
  /** Test/dev only: where the Drive API lives (`http://127.0.0.1:PORT/`); the `/drive/v3/…` path is kept. */
  readonly rootUrl?: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly signal?: AbortSignal;
  readonly retry?: RetryPolicy;
  readonly random?: () => number;
  /** `changes.list` page size; Drive's maximum is 1000. */
  readonly pageSize?: number;
}

export const FOLDER_MIME = "application/vnd.google-apps.folder";
export const SHORTCUT_MIME = "application/vnd.google-apps.shortcut";

const FILE_FIELDS = "id,name,mimeType,parents,trashed,driveId,md5Checksum,size";
const CHANGE_FIELDS = `nextPageToken,newStartPageToken,changes(changeType,fileId,removed,driveId,drive(id,name),file(${FILE_FIELDS}))`;

const FileSchema = v.object({
  id: v.string(),
  name: v.string(),
  mimeType: v.optional(v.string()),
  parents: v.optional(v.array(v.string())),
  trashed: v.optional(v.boolean()),
  driveId: v.optional(v.string()),
  md5Checksum: v.optional(v.string()),
  size: v.optional(
    v.pipe(
      v.union([v.pipe(v.string(), v.regex(/^\d+$/)), v.number()]),
      v.transform((value) => Number(value)),
    ),
  ),
});
const ChangeSchema = v.object({
  changeType: v.optional(v.string()),
  removed: v.optional(v.boolean()),
  fileId: v.optional(v.string()),
  driveId: v.optional(v.string()),
  file: v.optional(FileSchema),
  drive: v.optional(v.object({ id: v.string(), name: v.optional(v.string()) })),
});
const PageSchema = v.object({
  changes: v.optional(v.array(v.unknown()), []),
  nextPageToken: v.optional(v.string()),
  newStartPageToken: v.optional(v.string()),
});
const DriveSchema = v.object({ id: v.string(), name: v.string() });
const DriveListSchema = v.object({
  drives: v.optional(v.array(DriveSchema), []),
  nextPageToken: v.optional(v.string()),
});

export function createDriveApi(options: DriveApiOptions): DriveApi {
  const client = createDriveClient({
    version: "v3",
    auth: options.auth,
    retry: false,
    ...(options.rootUrl ? { rootUrl: options.rootUrl } : {}),
  });
  const context = { clock: options.clock, log: options.log, policy: options.retry, random: options.random, signal: options.signal };
  const call = <T>(what: string, run: () => Promise<{ data: unknown }>, schema: v.GenericSchema<unknown, T>): Promise<T> =>
    withTokenRenewal(what, () => withGoogleRetry(what, async () => parseAnswer(what, (await run()).data, schema), context), options.renewal, options.log);
  const request = { signal: options.signal };
  const shared = (driveId: string | undefined) => (driveId ? { driveId, supportsAllDrives: true } : { supportsAllDrives: true });

  return {
    async getStartPageToken(driveId) {
      const schema = v.object({ startPageToken: v.string() });
      const run = () => client.changes.getStartPageToken({ ...shared(driveId) }, request);
      return (await call("changes.getStartPageToken", run, schema)).startPageToken;
    },
    async listChanges(pageToken, driveId) {
      const params = {
        pageToken,
        pageSize: options.pageSize ?? 1000,
        includeRemoved: true,
        includeItemsFromAllDrives: driveId !== undefined,
        ...shared(driveId),
        fields: CHANGE_FIELDS,
      };
      const page = await call("changes.list", () => client.changes.list(params, request), PageSchema);
      return parseChanges(page, options.log);
    },
    async getFile(fileId) {
      const params = { fileId, supportsAllDrives: true, fields: FILE_FIELDS };
      return ifFound(call("files.get", () => client.files.get(params, request), FileSchema));
    },
    async getDrive(driveId) {
      const run = () => client.drives.get({ driveId, fields: "id,name" }, request);
      return ifFound(call("drives.get", run, DriveSchema));
    },
    async listDrives() {
      const out: SharedDrive[] = [];
      let pageToken: string | undefined;
      do {
        const params = { pageSize: 100, pageToken, fields: "nextPageToken,drives(id,name)" };
        const page = await call("drives.list", () => client.drives.list(params, request), DriveListSchema);
        out.push(...page.drives);
        pageToken = page.nextPageToken;
      } while (pageToken);
      return out;
    },
  };
}

function parseAnswer<T>(what: string, data: unknown, schema: v.GenericSchema<unknown, T>): T {
  const parsed = v.safeParse(schema, data);
  if (parsed.success) return parsed.output;
  const where = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "(body)"}: ${issue.message}`).join("; ");
  throw new GoogleCallError(what, { kind: "other", detail: `unexpected answer from Google Drive (${where})` });
}

function parseChanges(page: v.InferOutput<typeof PageSchema>, log: Logger): ChangePage {
  const changes: DriveChange[] = [];
  let malformed = 0;
  for (const raw of page.changes) {
    const parsed = v.safeParse(ChangeSchema, raw);
    if (parsed.success) changes.push(parsed.output);
    else {
      malformed++;
      log.warn({ issue: parsed.issues[0]?.message, at: v.getDotPath(parsed.issues[0]) }, "Skipped a malformed change");
    }
  }
  return { changes, nextPageToken: page.nextPageToken, newStartPageToken: page.newStartPageToken, malformed };
}

async function ifFound<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof GoogleCallError && error.failure.kind === "not-found") return undefined;
    throw error;
  }
}
