import { access, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import * as v from "valibot";
import { parseRcloneConfig } from "./config-file.ts";

/**
 * An rclone `drive` remote reused for the Drive monitor: its OAuth client and token (or its service account) and its
 * shared drive. Validated the way rclone writes it (docs: ../shared/reference/integrations.md §2.6); every problem is
 * reported, not just the first. A remote with problems is not used; warnings are logged and the remote is used.
 */
export interface RcloneToken {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly tokenType: string;
  /** Epoch milliseconds. */
  readonly expiryDate: number;
}

export interface RcloneDriveRemote {
  readonly name: string;
  /** `undefined` → rclone's shared client. */
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** Full scope URLs, space-separated (blank in the file means `drive`). */
  readonly scope: string;
  readonly token?: RcloneToken;
  readonly teamDrive?: string;
  readonly rootFolderId?: string;
  /** Absolute path of the key file. */
  readonly serviceAccountFile?: string;
  /** Inline key JSON (`service_account_credentials`). */
  readonly serviceAccountCredentials?: string;
}

export interface RemoteCheck {
  readonly configPath: string;
  readonly remote?: RcloneDriveRemote;
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
  /** `name (type)` of every remote in the file. */
  readonly remotes: readonly string[];
}

const SCOPES = ["drive", "drive.readonly", "drive.file", "drive.appfolder", "drive.metadata.readonly"];
const LIMITED_SCOPES = new Set(["drive.file", "drive.appfolder"]);
// RFC 3339 with a mandatory offset, as golang.org/x/oauth2 writes `expiry` (nanoseconds, local offset or Z).
const EXPIRY = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;

const TOKEN_KEYS = ["access_token", "token_type", "refresh_token", "expiry"] as const;
const TokenSchema = v.object({
  access_token: v.string("access_token must be a string"),
  token_type: v.pipe(v.string("token_type must be a string"), v.regex(/^bearer$/i, 'token_type must be "Bearer"')),
  refresh_token: v.pipe(v.string("refresh_token is missing"), v.minLength(1, "refresh_token is empty")),
  expiry: v.pipe(v.string("expiry is missing"), v.regex(EXPIRY, "expiry must be an RFC 3339 time with an offset")),
});

export async function loadRcloneRemote(configPath: string, remoteName: string): Promise<RemoteCheck> {
  let text: string;
  try {
    text = await readFile(configPath, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "the file does not exist" : (error as Error).message;
    return { configPath, problems: [`Cannot read rclone config ${configPath}: ${reason}.`], warnings: [], remotes: [] };
  }
  const check = checkRcloneRemote(text, remoteName, configPath);
  const file = check.remote?.serviceAccountFile;
  if (!file || (await exists(file))) return check;
  return { ...check, remote: undefined, problems: [...check.problems, `service_account_file ${file} does not exist.`] };
}

export function checkRcloneRemote(text: string, remoteName: string, configPath: string): RemoteCheck {
  const file = parseRcloneConfig(text);
  const remotes = [...file.sections].map(([name, keys]) => `${name} (${keys.get("type") ?? "no type"})`);
  const fail = (problem: string): RemoteCheck => ({ configPath, problems: [problem], warnings: [], remotes });
  if (file.encrypted) {
    return fail(`${configPath} is encrypted (rclone config password); autoscan cannot read it. Use a separate, unencrypted rclone.conf for autoscan, or a service account.`);
  }
  const name = remoteName.replace(/:$/, "");
  const keys = file.sections.get(name);
  if (!keys) {
    const list = remotes.length ? `Remotes in that file: ${remotes.join(", ")}.` : "That file has no remotes.";
    return fail(`No remote named '${name}' in ${configPath}. ${list} Set CLOUD.RCLONE_REMOTE to one of them, or rename a remote with \`rclone config rename <old> ${name}\`.`);
  }
  const type = keys.get("type");
  if (type !== "drive") {
    const inner = keys.get("remote")?.split(":")[0];
    const hint = inner ? ` It wraps '${inner}'; point CLOUD.RCLONE_REMOTE at that drive remote.` : "";
    return fail(`Remote '${name}' has type = ${type ?? "(none)"}, not drive.${hint}`);
  }
  return validateDriveRemote(name, keys, configPath, remotes);
}

function validateDriveRemote(name: string, keys: ReadonlyMap<string, string>, configPath: string, remotes: readonly string[]): RemoteCheck {
  const problems: string[] = [];
  const warnings: string[] = [];
  const get = (key: string): string | undefined => keys.get(key) || undefined;
  const scope = checkScope(get("scope"), problems, warnings);
  const serviceAccountFile = get("service_account_file");
  const serviceAccountCredentials = get("service_account_credentials");
  const usesServiceAccount = Boolean(serviceAccountFile || serviceAccountCredentials);
  const token = usesServiceAccount ? undefined : checkToken(name, get("token"), problems);
  const clientId = get("client_id");
  const clientSecret = get("client_secret");
  if (!clientId && !usesServiceAccount) {
    warnings.push(`Remote '${name}' has a blank client_id, so it uses rclone's shared OAuth client: it is slow (shared quota) and rclone says it is being retired during 2026. Create your own client and run \`rclone config reconnect ${name}:\`.`);
  }
  if (clientId && !clientSecret && !usesServiceAccount) problems.push(`Remote '${name}' sets client_id but its client_secret is blank.`);
  const teamDrive = get("team_drive");
  if (teamDrive && !/^0A[\w-]{8,}$/.test(teamDrive)) warnings.push(`team_drive '${teamDrive}' does not look like a shared drive id (they start with 0A).`);
  if (get("impersonate")) warnings.push("impersonate is not supported by autoscan; the service account acts as itself.");
  const remote: RcloneDriveRemote = {
    name,
    clientId,
    clientSecret,
    scope,
    token,
    teamDrive,
    rootFolderId: get("root_folder_id"),
    serviceAccountFile: serviceAccountFile && resolvePath(serviceAccountFile, configPath),
    serviceAccountCredentials,
  };
  return { configPath, remote: problems.length ? undefined : remote, problems, warnings, remotes };
}

function checkScope(raw: string | undefined, problems: string[], warnings: string[]): string {
  const names = (raw ?? "drive").split(",").map((s) => s.trim().replace(/^https:\/\/www\.googleapis\.com\/auth\//, "")).filter(Boolean);
  for (const scope of names) {
    if (!SCOPES.includes(scope)) problems.push(`scope '${scope}' is not one of ${SCOPES.join(", ")}.`);
  }
  if (names.length && names.every((scope) => LIMITED_SCOPES.has(scope))) {
    warnings.push(`scope ${names.join(",")} only sees files rclone itself created; the monitor will not see media added by other tools.`);
  }
  return names.map((scope) => `https://www.googleapis.com/auth/${scope}`).join(" ");
}

function checkToken(name: string, raw: string | undefined, problems: string[]): RcloneToken | undefined {
  const reconnect = `run \`rclone config reconnect ${name}:\``;
  if (!raw) {
    problems.push(`Remote '${name}' has no token (and no service_account_file); ${reconnect}.`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    problems.push(`The token of remote '${name}' is not valid JSON; ${reconnect}.`);
    return undefined;
  }
  const upgraded = upgradeOldToken(json);
  const missing = TOKEN_KEYS.filter((key) => typeof upgraded !== "object" || upgraded === null || !(key in upgraded));
  if (missing.length) {
    for (const key of missing) problems.push(`token: ${key} is missing (${reconnect}).`);
    return undefined;
  }
  const parsed = v.safeParse(TokenSchema, upgraded);
  if (!parsed.success) {
    for (const issue of parsed.issues) problems.push(`token: ${issue.message} (${reconnect}).`);
    return undefined;
  }
  const { access_token, refresh_token, token_type, expiry } = parsed.output;
  return { accessToken: access_token, refreshToken: refresh_token, tokenType: token_type, expiryDate: Date.parse(expiry) };
}

/** Old rclone configs hold golang's field names (`AccessToken`, `RefreshToken`, `Expiry`), which rclone converts. */
function upgradeOldToken(json: unknown): unknown {
  if (!json || typeof json !== "object" || !("RefreshToken" in json)) return json;
  const old = json as Record<string, unknown>;
  return { access_token: old.AccessToken, token_type: old.TokenType ?? "Bearer", refresh_token: old.RefreshToken, expiry: old.Expiry };
}

function resolvePath(path: string, configPath: string): string {
  const expanded = path.replace(/^~(?=\/|$)/, homedir());
  return isAbsolute(expanded) ? expanded : resolve(dirname(configPath), expanded);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
