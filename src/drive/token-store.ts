import { readFile, rm, stat } from "node:fs/promises";
import * as v from "valibot";
import { writeFileDurably } from "../core/durable-file.ts";
import { ConfigError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";

/**
 * The OAuth tokens `autoscan authorize` obtained, in their own file in the data dir (mode 0600, never in the
 * config). The client id they were minted for is kept beside them: a refresh token only works with that client
 * (Google answers `unauthorized_client` otherwise), so a changed `CLOUD.CLIENT_ID` is detected before the first call.
 */
export interface StoredTokens {
  readonly clientId: string;
  readonly refreshToken: string;
  readonly accessToken?: string;
  /** Epoch milliseconds. */
  readonly expiryDate?: number;
  /** The scopes Google granted, space-separated. */
  readonly scope?: string;
  readonly tokenType?: string;
}

export interface TokenStore {
  readonly path: string;
  /** `undefined` when nothing was stored yet; a ConfigError when the file is unreadable or malformed. */
  load(): Promise<StoredTokens | undefined>;
  save(tokens: StoredTokens): Promise<void>;
  remove(): Promise<void>;
}

const FileSchema = v.object({
  version: v.literal(1),
  client_id: v.pipe(v.string(), v.minLength(1)),
  refresh_token: v.pipe(v.string(), v.minLength(1)),
  access_token: v.optional(v.string()),
  expiry_date: v.optional(v.number()),
  scope: v.optional(v.string()),
  token_type: v.optional(v.string()),
  saved_at: v.optional(v.string()),
});

export interface TokenStoreOptions {
  readonly path: string;
  /** Where a folder that cannot be fsynced is reported (once). */
  readonly log?: Logger;
}

export function createTokenStore(options: TokenStoreOptions): TokenStore {
  const { path } = options;
  return {
    path,
    async load() {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw new ConfigError(`Cannot read the Google token file ${path}: ${(error as Error).message}`);
      }
      return parseTokenFile(text, path);
    },
    async save(tokens) {
      const body = {
        version: 1,
        client_id: tokens.clientId,
        refresh_token: tokens.refreshToken,
        access_token: tokens.accessToken,
        expiry_date: tokens.expiryDate,
        scope: tokens.scope,
        token_type: tokens.tokenType,
        saved_at: new Date().toISOString(),
      };
      // Mode 0600 from the temp file's creation on: the tokens are never readable by others, not even for an instant.
      await writeFileDurably(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600, log: options.log });
    },
    async remove() {
      await rm(path, { force: true });
    },
  };
}

function parseTokenFile(text: string, path: string): StoredTokens {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`The Google token file ${path} is not valid JSON; run \`autoscan authorize\` again.`);
  }
  const parsed = v.safeParse(FileSchema, json);
  if (!parsed.success) {
    const where = parsed.issues.map((issue) => v.getDotPath(issue) ?? "(file)").join(", ");
    throw new ConfigError(
      `The Google token file ${path} is malformed (${where}); run \`autoscan authorize\` again to replace it.`,
    );
  }
  const file = parsed.output;
  return {
    clientId: file.client_id,
    refreshToken: file.refresh_token,
    accessToken: file.access_token,
    expiryDate: file.expiry_date,
    scope: file.scope,
    tokenType: file.token_type,
  };
}

/** True when the file can be read by group or others (a copied file, a volume with a loose umask). */
export async function isTooOpen(path: string): Promise<boolean> {
  try {
    return process.platform !== "win32" && ((await stat(path)).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
