import * as v from "valibot";
import { checkDatabaseUrl } from "../core/database-url.ts";
import { DEFAULT_NOTIFY_EVENTS, NOTIFY_EVENTS } from "../core/notify-event.ts";
import { bool, int, num, oneOf, pathMap, str, strList, url } from "./schema-parts.ts";
import { suggestKey } from "./suggest.ts";

/**
 * `config/config.json`. The keys are plex_autoscan's (same names, defaults and meaning), so its users move over with
 * their file unchanged; the drive section is `CLOUD` (plex_autoscan's `GOOGLE` is accepted as an alias by the loader).
 * Keys new in autoscan are marked "new". docs/configuration.md documents each key.
 */
const CloudSchema = v.strictObject({
  ENABLED: bool(false),
  CLIENT_ID: str(""),
  CLIENT_SECRET: str(""),
  /** new: a service account key file (shared drives the account is a member of). */
  SERVICE_ACCOUNT_FILE: str(""),
  /** new: reuse an rclone `drive` remote's client and token. */
  RCLONE_CONFIG: str(""),
  RCLONE_REMOTE: str(""),
  ALLOWED: v.optional(
    v.strictObject({
      FILE_PATHS: strList(),
      FILE_EXTENSIONS: bool(false),
      FILE_EXTENSIONS_LIST: strList(),
      MIME_TYPES: bool(false),
      MIME_TYPES_LIST: strList(),
    }),
    {},
  ),
  POLL_INTERVAL: int(120, 5),
  DISABLE_DISK_FILE_SIZE_CHECK: bool(false),
  TEAMDRIVE: bool(false),
  TEAMDRIVES: strList(),
  SHOW_CACHE_LOGS: bool(true),
});

const RcloneSchema = v.strictObject({
  BINARY: str("/usr/bin/rclone"),
  CONFIG: str(""),
  CRYPT_MAPPINGS: pathMap(),
  RC_CACHE_REFRESH: v.optional(
    v.strictObject({
      ENABLED: bool(false),
      RC_URL: url("http://localhost:5572"),
      FILE_EXISTS_TO_REMOTE_MAPPINGS: pathMap(),
    }),
    {},
  ),
});

export const PRIORITY_KEY = /^-?\d+$/;

/** A target's name: the key in `TARGETS`, shown in logs, the queue and the console. `plex` is the primary Plex. */
export const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

const TARGET_TYPES = ["plex", "jellyfin", "emby", "autoscan", "audiobookshelf"] as const;

/** What each type calls its TOKEN, for the message when it is missing. */
const TOKEN_WORDS: Readonly<Record<string, string>> = {
  plex: "the Plex token of that server",
  jellyfin: "a Jellyfin API key: Dashboard → API Keys",
  emby: "an Emby API key: Settings → Advanced → API Keys",
};

/**
 * A section of named entries (`TARGETS`, `ARR`): an object of name → entry. A list is refused with the same message
 * (valibot's record would take it, with names "0", "1" …).
 */
function namedSection<K extends v.GenericSchema<string, string>, E extends v.GenericSchema>(key: K, entry: E, message: string) {
  return v.pipe(
    v.custom<Record<string, unknown>>((input) => typeof input === "object" && input !== null && !Array.isArray(input), message),
    v.record(key, entry, message),
  );
}

/** A watcher's name in `WATCH`: it names the source of its requests (`Watch (<name>)`). */
export const WATCHER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

/** new: one watcher of library folders (`WATCH`): files no *arr app announced. */
const WatcherSchema = v.strictObject({
  /** Folders as autoscan sees them (the local side of SERVER_FILE_EXIST_PATH_MAPPINGS, or the server's own paths). */
  PATHS: v.pipe(
    v.array(
      v.pipe(v.string("expected a path string"), v.regex(/^\//, "expected an absolute path, e.g. \"/mnt/media/TV\"")),
      'expected a list of folders, e.g. ["/mnt/media/TV"]',
    ),
    v.minLength(1, 'expected at least one folder, e.g. ["/mnt/media/TV"]'),
  ),
  /** `events`: the kernel's change notifications (local disks); `poll`: a walk every POLL_SECONDS (network shares, FUSE). */
  MODE: oneOf(["events", "poll"], "events"),
  POLL_SECONDS: int(300, 10, 86_400),
  /** A file is reported once its size and mtime have not changed for this long (a copy in progress is not scanned). */
  MIN_AGE_SECONDS: int(30, 0, 86_400),
  /** Paths containing any of these (case-insensitive, as SERVER_IGNORE_LIST) are not reported. */
  IGNORE: strList(),
  /** Only files with these extensions ("mkv", ".srt"); empty: every file. */
  EXTENSIONS: strList(),
  /** The requests' priority (lower first); absent: SERVER_SCAN_PRIORITIES decides by the folder. */
  PRIORITY: v.optional(v.pipe(v.number("expected a whole number (no quotes)"), v.integer("expected a whole number"), v.minValue(0, "expected a number of at least 0"))),
});

/** An *arr app's name in `ARR`: also the label of its webhook URL (`/<SERVER_PASS>/<name>`). */
export const ARR_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$/;

const ARR_TYPES = ["sonarr", "radarr", "lidarr", "readarr"] as const;

/** new: one *arr app (`ARR`), read back by the backfill. */
const ArrSchema = v.strictObject({
  TYPE: v.pipe(
    v.string(`expected one of ${ARR_TYPES.map((t) => `"${t}"`).join(", ")}`),
    v.transform((s) => s.toLowerCase()),
    v.picklist(ARR_TYPES, `expected one of ${ARR_TYPES.map((t) => `"${t}"`).join(", ")}`),
  ),
  URL: v.pipe(
    v.string("expected a URL string"),
    v.url("expected a URL such as http://sonarr:8989"),
    v.regex(/^https?:\/\//i, "expected an http:// or https:// URL, such as http://sonarr:8989"),
  ),
  API_KEY: v.pipe(
    v.string("expected a string (the app's API key: Settings → General → Security)"),
    v.minLength(1, "expected the app's API key (Settings → General → Security)"),
  ),
  BACKFILL: bool(true),
  /** Seconds before a call to the app gives up. */
  TIMEOUT: int(30, 1, 3600),
});

/** A notifier's name in `NOTIFY`, shown in logs, `doctor` and `/health`. */
export const NOTIFIER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

const NOTIFIER_TYPES = ["discord", "ntfy", "apprise", "webhook"] as const;

/** `expected one of "a", "b" (did you mean "a"?)`: the nearest value for a typo, as for a key. */
const expectedOneOf = (values: readonly string[]) => (issue: { readonly input: unknown }) => {
  const hint = typeof issue.input === "string" ? suggestKey(issue.input, values) : undefined;
  return `expected one of ${values.map((x) => `"${x}"`).join(", ")}${hint ? ` (did you mean "${hint}"?)` : ""}`;
};

/**
 * What each type's URL must look like. The message never repeats the URL: a Discord webhook carries its token in the
 * path, an ntfy topic is its own password, an apprise-api key reaches every service behind it.
 */
const NOTIFIER_URL_RULES: Readonly<Record<(typeof NOTIFIER_TYPES)[number], { readonly test: (path: string) => boolean; readonly message: string }>> = {
  discord: {
    test: (path) => /\/webhooks\/[^/]+\/[^/]+/.test(path),
    message: "a discord URL is the channel's webhook URL (Server Settings → Integrations → Webhooks → Copy Webhook URL): https://discord.com/api/webhooks/<id>/<token>",
  },
  ntfy: { test: (path) => /^\/[^/]+/.test(path), message: "an ntfy URL names the topic: https://ntfy.sh/<topic>" },
  apprise: {
    test: (path) => /\/notify(\/|$)/.test(path),
    message: "an apprise URL is apprise-api's notify address: http://apprise:8000/notify/<KEY> (or /notify with APPRISE_STATELESS_URLS)",
  },
  webhook: { test: () => true, message: "" },
};

/** new: one notifier (`NOTIFY`): where to tell, which events, and how long to gather them into one message. */
const NotifierSchema = v.pipe(
  v.strictObject({
    TYPE: v.pipe(
      v.string(expectedOneOf(NOTIFIER_TYPES)),
      v.transform((s) => s.toLowerCase()),
      v.picklist(NOTIFIER_TYPES, expectedOneOf(NOTIFIER_TYPES)),
    ),
    URL: v.pipe(
      v.string("expected a URL string"),
      v.url("expected a URL such as https://ntfy.sh/<topic>"),
      v.regex(/^https?:\/\//i, "expected an http:// or https:// URL"),
    ),
    EVENTS: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(expectedOneOf(NOTIFY_EVENTS)), v.picklist(NOTIFY_EVENTS, expectedOneOf(NOTIFY_EVENTS))), 'expected a list of events, e.g. ["failed", "target_down"]'),
        v.minLength(1, "expected at least one event (or leave EVENTS out for the default ones)"),
      ),
      [...DEFAULT_NOTIFY_EVENTS],
    ),
    /** Seconds the events of one notifier are gathered into one message (0: each goes at once). */
    BATCH_SECONDS: int(30, 0, 3600),
  }),
  v.forward(
    v.check(
      // A URL that does not parse has its own problem said above.
      (notifier) => NOTIFIER_URL_RULES[notifier.TYPE].test(URL.parse(notifier.URL)?.pathname ?? "/notify/webhooks/x/y"),
      (issue) => NOTIFIER_URL_RULES[(issue.input as { TYPE: (typeof NOTIFIER_TYPES)[number] }).TYPE].message,
    ),
    ["URL"],
  ),
);

/** new: one further scan target (`TARGETS`). */
const TargetSchema = v.pipe(
  v.strictObject({
    TYPE: v.pipe(
      v.string(`expected one of ${TARGET_TYPES.map((t) => `"${t}"`).join(", ")}`),
      v.transform((s) => s.toLowerCase()),
      v.picklist(TARGET_TYPES, `expected one of ${TARGET_TYPES.map((t) => `"${t}"`).join(", ")}`),
    ),
    URL: v.pipe(
      v.string("expected a URL string"),
      v.url("expected a URL such as http://jellyfin:8096"),
      v.regex(/^https?:\/\//i, "expected an http:// or https:// URL, such as http://jellyfin:8096"),
    ),
    TOKEN: str(""),
    /** audiobookshelf only: an API key (Audiobookshelf 2.26.0 or newer) of an admin user. */
    API_KEY: str(""),
    USERNAME: str(""),
    PASSWORD: str(""),
    PATH_MAPPINGS: pathMap(),
    ENABLED: bool(true),
    TIMEOUT: int(30, 1, 3600),
  }),
  v.forward(
    v.check(
      (target) => target.TYPE === "autoscan" || target.TYPE === "audiobookshelf" || target.TOKEN !== "",
      (issue) => {
        const type = String((issue.input as { TYPE?: unknown }).TYPE);
        return `a "${type}" target needs TOKEN (${TOKEN_WORDS[type] ?? "its API key"})`;
      },
    ),
    ["TOKEN"],
  ),
  v.forward(
    v.check(
      (target) => target.TYPE !== "audiobookshelf" || target.API_KEY !== "",
      (issue) =>
        `an "audiobookshelf" target needs API_KEY (an API key of an admin user, Audiobookshelf 2.26.0 or newer: Settings → API Keys)${
          (issue.input as { TOKEN?: unknown }).TOKEN ? "; its key goes in API_KEY, not TOKEN" : ""
        }`,
    ),
    ["API_KEY"],
  ),
  v.forward(
    v.check(
      (target) => target.TYPE === "audiobookshelf" || target.API_KEY === "",
      (issue) => `API_KEY is the key of an "audiobookshelf" target; a "${String((issue.input as { TYPE?: unknown }).TYPE)}" target takes TOKEN (or USERNAME and PASSWORD for "autoscan")`,
    ),
    ["API_KEY"],
  ),
  v.forward(
    v.check(
      (target) => (target.USERNAME === "") === (target.PASSWORD === ""),
      "USERNAME and PASSWORD go together (HTTP Basic auth of the other autoscan's /triggers/manual): set both or neither",
    ),
    ["PASSWORD"],
  ),
);

/**
 * `SERVER_DATABASE_URL`: "" (the embedded queue file), or a PostgreSQL URL with a host and a database. The message of
 * a bad one shows it with its password as `***` (src/core/database-url.ts); problems.ts never echoes the value.
 */
const databaseUrl = () =>
  v.optional(
    v.pipe(
      v.string(`expected a string: a PostgreSQL URL such as postgres://user:password@host:5432/autoscan, or "" for the embedded queue`),
      v.trim(),
      v.check(
        (text) => text === "" || checkDatabaseUrl(text).ok,
        (issue) => {
          const checked = checkDatabaseUrl(String(issue.input));
          return checked.ok ? "expected a PostgreSQL URL" : checked.problem;
        },
      ),
    ),
    "",
  );

export const ConfigSchema = v.strictObject({
  // Plex
  PLEX_LOCAL_URL: url("http://localhost:32400"),
  PLEX_TOKEN: str(""),
  PLEX_USER: str("plex"),
  PLEX_SCANNER: str("/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner"),
  PLEX_SUPPORT_DIR: str("/var/lib/plexmediaserver/Library/Application\\ Support"),
  PLEX_LD_LIBRARY_PATH: str("/usr/lib/plexmediaserver/lib"),
  PLEX_DATABASE_PATH: str(
    "/var/lib/plexmediaserver/Library/Application Support/Plex Media Server/Plug-in Support/Databases/com.plexapp.plugins.library.db",
  ),
  PLEX_CHECK_BEFORE_SCAN: bool(false),
  PLEX_WAIT_FOR_EXTERNAL_SCANNERS: bool(true),
  PLEX_ANALYZE_TYPE: oneOf(["off", "basic", "deep"], "basic"),
  PLEX_ANALYZE_DIRECTORY: bool(true),
  PLEX_FIX_MISMATCHED: bool(false),
  PLEX_FIX_MISMATCHED_LANG: str("en"),
  PLEX_EMPTY_TRASH: bool(false),
  PLEX_EMPTY_TRASH_MAX_FILES: int(100, 0),
  PLEX_EMPTY_TRASH_CONTROL_FILES: strList(),
  PLEX_EMPTY_TRASH_ZERO_DELETED: bool(false),
  /** new: "api" (HTTP partial scan) or "scanner" (Plex Media Scanner inside the Plex container). */
  PLEX_SCAN_METHOD: oneOf(["api", "scanner"], "api"),
  /** new: scanner layout of the Plex image; "auto" inspects the container. */
  PLEX_DOCKER_PRESET: oneOf(["auto", "pms-docker", "linuxserver", "hotio", "none"], "auto"),
  /** new: seconds before a Plex HTTP call gives up. */
  PLEX_TIMEOUT: int(30, 1, 3600),
  /** new: seconds before a scanner run is reported as timed out. */
  PLEX_SCANNER_TIMEOUT: int(7200, 10),
  // Server (intake)
  SERVER_IP: str("0.0.0.0"),
  SERVER_PORT: int(3467, 1, 65535),
  /** new: a path prefix every route is served under, for a reverse proxy that forwards it (`/autoscan`). */
  SERVER_URL_BASE: v.optional(
    v.pipe(
      v.string("expected a path such as \"/autoscan\""),
      v.trim(),
      v.transform((text) => (text === "/" ? "" : text.replace(/\/+$/, ""))),
      v.regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'expected a path of folders such as "/autoscan" (starting with "/", letters, digits, ".", "_", "~", "-"), or "" for none'),
      // Clients normalise `.` and `..` away before they send a URL: under such a base every route would answer 404.
      v.check((text) => !text.split("/").some((segment) => segment === "." || segment === ".."), 'expected a path of folders such as "/autoscan", with no "." or ".." segments (they are resolved away before a request is sent)'),
    ),
    "",
  ),
  /**
   * The secret in every webhook URL (`config init` and first start generate one). "" (or absent) means unset: only
   * the server needs it and refuses to start without it (`requireServerPass` in load.ts); other commands run.
   */
  SERVER_PASS: v.optional(
    v.pipe(
      v.string("expected a string (the secret in every webhook URL; `autoscan config upgrade` adds a random one)"),
      v.regex(/^[^/?#%\s]*$/, "expected no spaces and none of / ? # % (it is one segment of a URL path)"),
    ),
    "",
  ),
  SERVER_ALLOW_MANUAL_SCAN: bool(false),
  SERVER_IGNORE_LIST: strList(),
  /** new: HTTP Basic credentials that enable the bare /triggers/manual route. */
  SERVER_AUTH_USERNAME: str(""),
  SERVER_AUTH_PASSWORD: str(""),
  /** new: request body cap in bytes. */
  SERVER_MAX_REQUEST_BYTES: int(1_048_576, 1024, 64 * 1_048_576),
  /** new: Prometheus metrics at GET /<SERVER_PASS>/metrics (off: that URL answers 404). */
  SERVER_METRICS: bool(false),
  /** new: the log level ("" = from --loglevel / AUTOSCAN_LOGLEVEL, else INFO; those win when set). Reloadable. */
  SERVER_LOG_LEVEL: oneOf(["", "debug", "info", "warning", "warn", "error"], ""),
  // Paths
  SERVER_PATH_MAPPINGS: pathMap(),
  SERVER_FILE_EXIST_PATH_MAPPINGS: pathMap(),
  // Queue and dispatch
  SERVER_SCAN_DELAY: int(180, 0, 86_400),
  SERVER_MAX_FILE_CHECKS: int(10, 0, 10_000),
  SERVER_FILE_CHECK_DELAY: int(60, 0, 86_400),
  SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION: bool(false),
  SERVER_SCAN_PRIORITIES: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(PRIORITY_KEY, 'expected a whole number as the key, e.g. "0"')),
      v.array(v.string("expected a path string"), "expected a list of path fragments"),
      'expected an object of priority → list of paths, e.g. {"0": ["/Movies/"], "1": ["/TV/"]}',
    ),
    {},
  ),
  SERVER_USE_SQLITE: bool(false),
  /**
   * new: the queue in PostgreSQL, shared by several instances (`postgres://user:password@host:5432/database`); "" is the
   * embedded queue file. Also the environment variables SERVER_DATABASE_URL and SERVER_DATABASE_URL_FILE (a file that
   * holds the URL: Docker secrets; file-variables.ts).
   */
  SERVER_DATABASE_URL: databaseUrl(),
  /** new: seconds an instance holds a claimed folder without renewing it; a dead instance's folders wait this long. */
  SERVER_LEASE_SECONDS: int(15, 5, 600),
  /** new: scans at once per target. */
  SERVER_SCAN_CONCURRENCY: int(1, 1, 16),
  /** new: hours a scan is retried while its target is unavailable before it is marked failed. */
  SERVER_RETRY_MAX_HOURS: num(24, 0),
  /** new: history kept for completed and failed scans. */
  SERVER_HISTORY_MAX_DAYS: num(7, 0),
  SERVER_HISTORY_MAX_ROWS: int(10_000, 0),
  /** new: after each scan, look the requested files up in the server's library (landed / not visible). Reloadable. */
  SERVER_CONFIRM_LANDED: bool(true),
  /** new: seconds before a file not visible at the first look is looked up again (then rescanned once). Reloadable. */
  SERVER_LANDED_RECHECK: int(300, 5, 86_400),
  /** new: seconds Jellyfin and Emby get before the first look (Jellyfin acts after its 60 s LibraryMonitorDelay). */
  SERVER_LANDED_SETTLE: int(90, 0, 3_600),
  /** new: seconds RUN_COMMAND_BEFORE_SCAN / RUN_COMMAND_AFTER_SCAN may run. */
  SERVER_COMMAND_TIMEOUT: int(300, 1),
  RUN_COMMAND_BEFORE_SCAN: str(""),
  RUN_COMMAND_AFTER_SCAN: str(""),
  // Docker / host scanner
  USE_DOCKER: bool(false),
  DOCKER_NAME: str("plex"),
  USE_SUDO: bool(true),
  /** new: further scan targets by name (Jellyfin, Emby, another Plex, another autoscan); `plex` is PLEX_*. */
  TARGETS: v.optional(
    namedSection(
      v.pipe(
        v.string(),
        v.regex(TARGET_NAME, "expected a target name of letters, digits, '.', '_' or '-' (at most 40), e.g. \"jellyfin\""),
        v.check((name) => name.toLowerCase() !== "plex", 'the name "plex" is the primary Plex (the PLEX_* keys); pick another, e.g. "plex-4k"'),
      ),
      TargetSchema,
      'expected an object of name → target, e.g. {"jellyfin": {"TYPE": "jellyfin", "URL": "http://jellyfin:8096", "TOKEN": "…"}}',
    ),
    {},
  ),
  /** new: the *arr apps by name (also their webhook label), read back for the imports autoscan missed. */
  ARR: v.optional(
    namedSection(
      v.pipe(
        v.string(),
        v.regex(ARR_NAME, 'expected an app name of letters, digits, space, ".", "_" or "-" (at most 40), e.g. "sonarr"'),
      ),
      ArrSchema,
      'expected an object of name → app, e.g. {"sonarr": {"TYPE": "sonarr", "URL": "http://sonarr:8989", "API_KEY": "…"}}',
    ),
    {},
  ),
  /** new: seconds between two reads of the *arr apps' history (and one at start). */
  SERVER_BACKFILL_INTERVAL: int(900, 60, 86_400),
  /** new: notifiers by name (Discord, ntfy, apprise-api, any JSON webhook): failed folders, targets down and up … */
  NOTIFY: v.optional(
    namedSection(
      v.pipe(
        v.string(),
        v.regex(NOTIFIER_NAME, 'expected a notifier name of letters, digits, ".", "_" or "-" (at most 40), e.g. "discord"'),
      ),
      NotifierSchema,
      'expected an object of name → notifier, e.g. {"phone": {"TYPE": "ntfy", "URL": "https://ntfy.sh/<topic>"}}',
    ),
    {},
  ),
  /** new: watched library folders by name (files copied by hand, transcoders, subtitles: what no webhook announces). */
  WATCH: v.optional(
    namedSection(
      v.pipe(
        v.string(),
        v.regex(WATCHER_NAME, 'expected a watcher name of letters, digits, ".", "_" or "-" (at most 40), e.g. "tv"'),
      ),
      WatcherSchema,
      'expected an object of name → watcher, e.g. {"tv": {"PATHS": ["/mnt/media/TV"], "MODE": "poll"}}',
    ),
    {},
  ),
  /** new: anchor files on autoscan's disk; each guards the folder it lies in, and everything below it. */
  SERVER_ANCHORS: v.optional(
    v.array(
      v.pipe(v.string("expected a path string"), v.regex(/^(\/|[A-Za-z]:[\\/])/, "expected an absolute path to an anchor file")),
      'expected a list of anchor files, e.g. ["/mnt/remote/Media/.anchor"]',
    ),
    [],
  ),
  // Drive and rclone
  CLOUD: v.optional(CloudSchema, {}),
  RCLONE: v.optional(RcloneSchema, {}),
});

export type RawConfig = v.InferInput<typeof ConfigSchema>;
export type Config = v.InferOutput<typeof ConfigSchema>;
export type CloudConfig = Config["CLOUD"];
export type TargetConfig = Config["TARGETS"][string];
export type ArrConfig = Config["ARR"][string];
export type NotifierConfig = Config["NOTIFY"][string];
export type WatcherConfig = Config["WATCH"][string];
