import type * as v from "valibot";
import { ConfigSchema } from "./schema.ts";
import { suggestKey } from "./suggest.ts";

/**
 * valibot issues → one readable line each: the key path, what was expected, what was found. Unknown keys are found by
 * walking the file against the schema (valibot stops at the first one per object), each with the nearest known key
 * (`Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?`).
 */
export interface IssueContext {
  /** top-level key → where its value came from (`environment variable SERVER_PORT`). */
  readonly origins: ReadonlyMap<string, string>;
  /** The input as validated (after legacy migration and environment overrides). */
  readonly raw: unknown;
  /** Section names as the user wrote them (`CLOUD` → `GOOGLE`), so a path points into their file. */
  readonly aliases?: ReadonlyMap<string, string>;
}

/** Values never echoed back in a problem line: they end up in terminals and `docker logs`. */
const SECRET_PATHS = new Set(["SERVER_PASS", "PLEX_TOKEN", "SERVER_AUTH_PASSWORD", "CLOUD.CLIENT_SECRET", "SERVER_DATABASE_URL"]);
/** Sections whose values hold tokens and keys: a whole one given as something else is described by its type. */
const SECRET_SECTIONS: ReadonlySet<string> = new Set(["TARGETS", "ARR", "CLOUD", "NOTIFY"]);
/**
 * Sections of named entries, each an object holding a secret (a target's TOKEN, an *arr app's API_KEY, a notifier's
 * URL, where a Discord webhook's token is in the path): a value anywhere under them is never echoed, as the one
 * misplaced is most often the secret itself (`"NOTIFY": {"discord": "https://discord.com/api/webhooks/…"}`).
 */
const ENTRY_SECTIONS: ReadonlySet<string> = new Set(["TARGETS", "ARR", "NOTIFY"]);
/** A key named like a secret, wherever it is (`…_PASS`, `PASSWORD`, `TOKEN`, `SECRET`, `API_KEY`). */
const SECRET_NAME = /PASS|TOKEN|SECRET|(^|_)KEY$/i;

function isSecretValue(keys: readonly (string | number)[]): boolean {
  const [section] = keys;
  if (typeof section === "string" && ENTRY_SECTIONS.has(section)) return true;
  if (keys.length === 1 && SECRET_SECTIONS.has(String(section))) return true;
  return SECRET_PATHS.has(formatPath(keys)) || keys.some((key) => typeof key === "string" && SECRET_NAME.test(key));
}

export function describeIssues(issues: readonly v.BaseIssue<unknown>[], context: IssueContext): string[] {
  const unknown = findUnknownKeys(context.raw, [], context);
  const typed = issues
    .filter((issue) => !(issue.type === "strict_object" && issue.expected === "never"))
    .map((issue) => describeIssue(issue, context));
  return [...typed, ...unknown];
}

function describeIssue(issue: v.BaseIssue<unknown>, context: IssueContext): string {
  const keys = (issue.path ?? []).map((item) => item.key as string | number);
  const shown = displayPath(keys, context);
  const origin = context.origins.get(String(keys[0] ?? ""));
  const from = origin ? ` (from ${origin})` : "";
  // A rule about a key's name (`TARGETS.<name>`), or across keys (a TYPE that needs its TOKEN): its message says it all,
  // and the value it would echo is a whole section (with secrets in it).
  const last = issue.path?.at(-1) as { origin?: string } | undefined;
  if (last?.origin === "key" || issue.type === "check") return `${shown}${from}: ${tidy(issue.message)}.`;
  const value = valueAt(context.raw, keys);
  if (value === undefined) return `${shown}: this key is required and missing.`;
  const found = isSecretValue(keys) ? `a ${describeType(value)} (value hidden)` : formatValue(value);
  return `${shown || "(the whole file)"}${from}: ${expectation(issue.message, keys)}, found ${found}.`;
}

function findUnknownKeys(raw: unknown, path: readonly string[], context: IssueContext): string[] {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
  // A section of named entries (`TARGETS`): each entry is checked against the entries' schema.
  if (isRecordOfObjects(path)) return Object.entries(raw).flatMap(([name, value]) => findUnknownKeys(value, [...path, name], context));
  const known = knownKeysAt(path);
  if (known.length === 0) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (known.includes(key)) {
      out.push(...findUnknownKeys(value, [...path, key], context));
      continue;
    }
    const hint = suggestKey(key, known);
    const where = path.length ? ` in "${displayPath(path, context)}"` : "";
    out.push(
      hint
        ? `Unknown key "${key}"${where} — did you mean "${hint}"?`
        : `Unknown key "${key}"${where} — remove it, or see docs/configuration.md for the known keys.`,
    );
  }
  return out;
}

/** `CLOUD.ALLOWED.FILE_PATHS[2]` */
export function formatPath(keys: readonly (string | number)[]): string {
  return keys.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${key}` : key), "");
}

function displayPath(keys: readonly (string | number)[], context: IssueContext): string {
  const [first, ...rest] = keys;
  const alias = first === undefined ? undefined : context.aliases?.get(String(first));
  return formatPath(alias ? [alias, ...rest] : keys);
}

function valueAt(raw: unknown, keys: readonly (string | number)[]): unknown {
  let current = raw;
  for (const key of keys) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function tidy(message: string): string {
  return message.replace(/^Invalid type: Expected (\w+) but received .*/, "expected $1");
}

/** What was expected; for an entry of `TARGETS`, `ARR` or `NOTIFY`, the shape of one. */
function expectation(message: string, keys: readonly (string | number)[]): string {
  const said = tidy(message);
  if (keys.length !== 2 || !ENTRY_SECTIONS.has(String(keys[0])) || said !== "expected Object") return said;
  return `expected an object such as {"TYPE": …, "URL": …} (see docs/configuration.md)`;
}

function describeType(value: unknown): string {
  return Array.isArray(value) ? "list" : value === null ? "null" : typeof value;
}

function formatValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The keys a strict object at `path` knows, read from the schema itself so they never drift. */
export function knownKeysAt(path: readonly (string | number)[]): string[] {
  return Object.keys(objectEntries(schemaAt(path)) ?? {});
}

type SchemaNode = { type?: string; wrapped?: unknown; entries?: Record<string, unknown>; value?: unknown };

/** The schema at `path`: through optional wrappers, pipes, strict objects, and records (any key → their value). */
function schemaAt(path: readonly (string | number)[]): SchemaNode | undefined {
  let schema = unwrap(ConfigSchema);
  for (const key of path) {
    schema = schema?.type === "record" ? unwrap(schema.value) : unwrap(objectEntries(schema)?.[String(key)]);
  }
  return schema;
}

function isRecordOfObjects(path: readonly (string | number)[]): boolean {
  const schema = schemaAt(path);
  return schema?.type === "record" && unwrap(schema.value)?.type === "strict_object";
}

/**
 * Through `optional` wrappers (a piped schema keeps its own type and entries), and into a pipe that starts with a
 * guard (`namedSection` checks "an object, not a list" before its record).
 */
function unwrap(schema: unknown): SchemaNode | undefined {
  let current = schema as (SchemaNode & { pipe?: readonly SchemaNode[] }) | undefined;
  while (current?.type === "optional") current = current.wrapped as SchemaNode;
  if (current?.type === "custom" && current.pipe) {
    return current.pipe.find((item) => item.type === "record" || item.type === "strict_object") ?? current;
  }
  return current;
}

function objectEntries(schema: unknown): Record<string, unknown> | undefined {
  const current = unwrap(schema);
  return current?.type === "strict_object" ? current.entries : undefined;
}
