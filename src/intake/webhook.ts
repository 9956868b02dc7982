import type { RefreshWish, ScanRequest } from "../core/scan.ts";
import type { PathMapper } from "../paths/mapping.ts";
import { lidarr } from "./lidarr.ts";
import { radarr } from "./radarr.ts";
import { readarr } from "./readarr.ts";
import type { ArrApp, ReceivedPath } from "./received-paths.ts";
import { sonarr } from "./sonarr.ts";

/**
 * A JSON body posted to `/<SERVER_PASS>`: which app sent it (by shape: the *arr apps all post to one URL), which
 * event, and which paths to scan. plex_autoscan's dispatch, extended to every event of every app:
 * - `Test` → answer 200, log, no scan (the app's Test button must pass).
 * - `Manual` (+ `filepath`) → a manual scan, handled like the form post.
 * - a scanning event of a recognised app → `ScanRequest`s; the event is `Upgrade` when `isUpgrade` is true; an upgrade's
 *   or a rename's files ask for refresh in place (`withRefresh`).
 * - any other event (Grab, Health, ApplicationUpdate …) → 200 with no scan: a 4xx makes the app disable the
 *   connection (Cloudbox/autoscan #214).
 * - a scanning event of a recognised app that names no usable path (a fork leaves a field out) → `unusable`: 200
 *   with the reason logged, for the same reason.
 * - a body that is not an *arr event (no `eventType`, a field of the wrong type, a scanning event without series,
 *   movie, artist or author) → `invalid` with a one-line reason (400).
 * The source is the app's name, or the fork's (`Sportarr`, `Whisparr`) when its User-Agent or `instanceName` says so.
 */
export const ARR_APPS: readonly ArrApp[] = [sonarr, radarr, lidarr, readarr];

export interface WebhookOptions {
  readonly mapper: PathMapper;
  /** The `<name>` of `/<SERVER_PASS>/<name>`, appended to the source as `Sonarr (name)`. */
  readonly label?: string;
  /** The sender's User-Agent (`Sonarr/4.0.9 (…)`), used only to name the app of a body without a known shape. */
  readonly userAgent?: string;
}

export type WebhookOutcome =
  | {
      readonly kind: "scan";
      readonly app: ArrApp;
      readonly source: string;
      readonly event: string;
      readonly requests: readonly ScanRequest[];
    }
  | {
      readonly kind: "test";
      readonly source: string;
      readonly event: string;
      /** The app's own name for itself (Settings → General → Instance Name), when it sends one. */
      readonly instance?: string;
      /** The app's own address (Settings → General → Application URL), when it sends one. */
      readonly appUrl?: string;
    }
  | { readonly kind: "no-scan"; readonly source: string; readonly event: string }
  | { readonly kind: "manual"; readonly filepath: unknown; readonly refresh?: unknown }
  | { readonly kind: "unusable"; readonly source: string; readonly event: string; readonly reason: string }
  | { readonly kind: "invalid"; readonly reason: string };

const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

export function parseWebhook(body: unknown, options: WebhookOptions): WebhookOutcome {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { kind: "invalid", reason: "Unknown scan request: the JSON body must be an object" };
  }
  const fields = body as Readonly<Record<string, unknown>>;
  const rawEvent = fields.eventType ?? fields.EventType;
  if (rawEvent === undefined || rawEvent === null) {
    return { kind: "invalid", reason: "Unknown scan request: missing 'eventType'" };
  }
  if (typeof rawEvent !== "string" || !EVENT_NAME.test(rawEvent)) {
    return { kind: "invalid", reason: "Unknown scan request: 'eventType' must be an event name such as \"Download\"" };
  }
  if (rawEvent === "Manual") return { kind: "manual", filepath: fields.filepath, ...(fields.refresh === undefined ? {} : { refresh: fields.refresh }) };

  const app = ARR_APPS.find((candidate) => hasAnyKey(fields, candidate.matchKeys)) ?? appFromUserAgent(options.userAgent);
  const fork = forkName(fields, options.userAgent);
  const source = sourceName(fork ?? app?.name ?? "Unknown app", options.label);
  if (rawEvent === "Test") return { kind: "test", source, event: rawEvent, ...sender(fields) };
  if (!app) {
    const scans = ARR_APPS.some((candidate) => candidate.scanEvents.has(rawEvent));
    return scans
      ? { kind: "invalid", reason: `Unknown scan request: a '${rawEvent}' event without series, movie, artist or author` }
      : { kind: "no-scan", source, event: rawEvent };
  }
  if (!app.scanEvents.has(rawEvent)) return { kind: "no-scan", source, event: rawEvent };

  const parsed = app.parse(fields, rawEvent);
  if (!parsed.ok) {
    const reason = fork ? parsed.reason.replace(app.name, fork) : parsed.reason;
    return parsed.unusable ? { kind: "unusable", source, event: rawEvent, reason } : { kind: "invalid", reason };
  }
  const event = rawEvent === "Download" && fields.isUpgrade === true ? "Upgrade" : rawEvent;
  const requests = toScanRequests(parsed.paths, { mapper: options.mapper, source, event });
  return { kind: "scan", app, source, event, requests: requests.map((request) => withRefresh(request, event)) };
}

/**
 * The events whose payload says a file changed in place, and what its item re-reads (`RefreshWish`) once the scan
 * has landed: refresh in place asked by the sender, the one list of it.
 * - `Upgrade`: the file was replaced, often under the very same name, which a folder scan takes for unchanged: its
 *   metadata and streams (`file`).
 * - `Rename`: the file moved to a new name; the server may keep the item's old metadata and title: its metadata.
 * - `Retag` (Lidarr, Readarr): the tags inside the same file were rewritten, which a folder scan does not re-read: its
 *   metadata.
 * Only a file at its new place asks: the old files (deleted) are only scanned, so that the server drops them, and a
 * folder names no item (a Rename without its file list scans the folder, as before).
 */
const REFRESH_BY_EVENT: Readonly<Record<string, RefreshWish>> = { Upgrade: "file", Rename: "metadata", Retag: "metadata" };

function withRefresh(request: ScanRequest, event: string): ScanRequest {
  const wish = Object.hasOwn(REFRESH_BY_EVENT, event) ? REFRESH_BY_EVENT[event] : undefined;
  return wish === undefined || request.deleted || request.kind !== "file" ? request : { ...request, refresh: wish };
}

/** The instance name and application URL a Test carries (the apps send both, empty when unset), kept short. */
function sender(fields: Readonly<Record<string, unknown>>): { instance?: string; appUrl?: string } {
  const text = (value: unknown): string | undefined =>
    typeof value === "string" && value.trim() !== "" ? value.trim().replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, 200) : undefined;
  const instance = text(fields.instanceName);
  const appUrl = text(fields.applicationUrl);
  return { ...(instance === undefined ? {} : { instance }), ...(appUrl === undefined ? {} : { appUrl }) };
}

/**
 * Forks that send one of the four apps' payloads: Sportarr (Sonarr's shape), Whisparr (v2 Sonarr's, v3 Radarr's).
 * Named by their User-Agent (`Whisparr/2.0.0.819 (…)`) or `instanceName`, so logs and History say which app it was.
 */
const FORKS: readonly string[] = ["Sportarr", "Whisparr"];

function forkName(fields: Readonly<Record<string, unknown>>, userAgent: string | undefined): string | undefined {
  const named = [userAgent?.split("/", 1)[0]?.trim(), typeof fields.instanceName === "string" ? fields.instanceName.trim() : undefined];
  return FORKS.find((fork) => named.some((name) => name?.toLowerCase() === fork.toLowerCase()));
}

/** `Sonarr/4.0.9.2244 (ubuntu 22.04)` → Sonarr. Only a fallback: the body's shape decides when it has one. */
function appFromUserAgent(userAgent: string | undefined): ArrApp | undefined {
  const product = userAgent?.split("/", 1)[0]?.trim().toLowerCase();
  return product ? ARR_APPS.find((candidate) => candidate.name.toLowerCase() === product) : undefined;
}

/**
 * Received paths → `ScanRequest`s in the media server's form (`SERVER_PATH_MAPPINGS`); the sender's spelling is kept
 * as `receivedPath` for the log and the manual page.
 */
export function toScanRequests(
  paths: readonly ReceivedPath[],
  options: { readonly mapper: PathMapper; readonly source: string; readonly event: string },
): ScanRequest[] {
  return paths.map((entry) => {
    const request: ScanRequest = {
      path: options.mapper.toServer(entry.path).path,
      kind: entry.kind,
      source: options.source,
      event: options.event,
      receivedPath: entry.path,
    };
    return entry.deleted ? { ...request, deleted: true } : request;
  });
}

/** `Sonarr`, or `Sonarr (4k)` when the sender posted to `/<SERVER_PASS>/4k`. */
export function sourceName(app: string, label: string | undefined): string {
  return label ? `${app} (${label})` : app;
}

function hasAnyKey(body: Readonly<Record<string, unknown>>, keys: readonly string[]): boolean {
  return keys.some((key) => body[key] !== undefined && body[key] !== null);
}
