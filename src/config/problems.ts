import * as v from "valibot";
import { ConfigSchema } from "./schema.ts";
import { suggestKey } from "./suggest.ts";

/**
 * valibot issues → one readable line each: the key path, what was expected, what was found, and for an unknown key
 * the nearest known one (`Unknown key "SERVER_PATH_MAPPING" — did you mean "SERVER_PATH_MAPPINGS"?`).
 */
export function describeIssues(
  issues: readonly v.BaseIssue<unknown>[],
  origins: ReadonlyMap<string, string>,
  raw: unknown,
): string[] {
  return issues.map((issue) => {
    const keys = (issue.path ?? []).map((item) => item.key as string | number);
    if (issue.type === "strict_object" && keys.length > 0) {
      const unknown = String(keys.at(-1));
      const parent = keys.slice(0, -1);
      const known = knownKeysAt(parent);
      const hint = suggestKey(unknown, known);
      const where = parent.length ? ` in "${formatPath(parent)}"` : "";
      return hint
        ? `Unknown key "${unknown}"${where} — did you mean "${hint}"?`
        : `Unknown key "${unknown}"${where} — remove it, or see config/config.example.json for the known keys.`;
    }
    const path = formatPath(keys);
    const origin = origins.get(String(keys[0] ?? ""));
    const from = origin ? ` (from ${origin})` : "";
    const value = valueAt(raw, keys);
    const found = value === undefined ? "nothing (the key is missing)" : formatValue(value);
    return `${path || "(the whole file)"}${from}: ${tidy(issue.message)}, found ${found}.`;
  });
}

/** `CLOUD.ALLOWED.FILE_PATHS[2]` */
export function formatPath(keys: readonly (string | number)[]): string {
  return keys.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${key}` : key), "");
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

function formatValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The keys a strict object at `path` knows, read from the schema itself so they never drift. */
export function knownKeysAt(path: readonly (string | number)[]): string[] {
  let schema: unknown = ConfigSchema;
  for (const key of path) {
    const entries = objectEntries(schema);
    schema = entries?.[String(key)];
  }
  return Object.keys(objectEntries(schema) ?? {});
}

function objectEntries(schema: unknown): Record<string, unknown> | undefined {
  let current = schema as { type?: string; wrapped?: unknown; entries?: Record<string, unknown> } | undefined;
  while (current && current.type === "optional") current = current.wrapped as typeof current;
  return current?.entries;
}
