import type { Command, CommandSpec } from "../command.ts";

/** A line of the command table: what `autoscan --help` lists, and how to load the command when it runs. */
export interface CommandEntry {
  readonly name: string;
  /** One line for `autoscan --help`. */
  readonly summary: string;
  load(): Promise<CommandSpec>;
}

/**
 * The command table. A command's module (and what it imports: Google's clients for `authorize`, Docker for `scan`,
 * sql.js for `server`) is loaded only when that command runs, so `autoscan health` (the image's HEALTHCHECK, every
 * 30 s) and `autoscan server` load nothing of the others.
 */
export const COMMAND_TABLE: readonly CommandEntry[] = [
  {
    name: "server",
    summary: "Run the scan relay: webhooks, manual scans, queue, Plex (the container's default command)",
    load: async () => (await import("./server.ts")).serverCommand,
  },
  {
    name: "config init",
    summary: "Write a documented default config.json with a fresh random SERVER_PASS",
    load: async () => (await import("./config-init.ts")).configInitCommand,
  },
  {
    name: "config check",
    summary: "Validate config.json and print a readable summary (exit 0 when valid, 2 when not)",
    load: async () => (await import("./config-check.ts")).configCheckCommand,
  },
  {
    name: "config show",
    summary: "Print the effective config: each key, its value (secrets masked) and where it comes from",
    load: async () => (await import("./config-show.ts")).configShowCommand,
  },
  {
    name: "config upgrade",
    summary: "Rename or drop plex_autoscan's legacy keys (each named), keep your values, list the new sections",
    load: async () => (await import("./config-upgrade.ts")).configUpgradeCommand,
  },
  {
    name: "webhook-url",
    summary: "Print the webhook URL to paste into each *arr app, and the events to tick",
    load: async () => (await import("./webhook-url.ts")).webhookUrlCommand,
  },
  {
    name: "arr connect",
    summary: "Create or fix autoscan's Webhook connection in each *arr app under ARR, then have the app test it (--dry-run to look first)",
    load: async () => (await import("./arr-connect.ts")).arrConnectCommand,
  },
  {
    name: "sections",
    summary: "List Plex's library sections and their folders (--json for scripts)",
    load: async () => (await import("./sections.ts")).sectionsCommand,
  },
  {
    name: "scan",
    summary: "Run Plex Media Scanner on one folder now, in the Plex container or on this host (exits with its code)",
    load: async () => (await import("./scan.ts")).scanCommand,
  },
  {
    name: "health",
    summary: "Ask the running server whether it is ready (exit 0 when /health answers 200)",
    load: async () => (await import("./health.ts")).healthCommand,
  },
  {
    name: "authorize",
    summary: "Connect autoscan to Google Drive (prints a link, then asks for the code or URL)",
    load: async () => (await import("./authorize.ts")).authorizeCommand,
  },
  {
    name: "rclone check",
    summary: "Check the rclone drive remote the Google Drive monitor would use",
    load: async () => (await import("./rclone-check.ts")).rcloneCheckCommand,
  },
  {
    name: "doctor",
    summary: "Check the config, data directory, Plex, path mappings, Docker, Drive and port; say what to fix (exit 1 on errors)",
    load: async () => (await import("./doctor.ts")).doctorCommand,
  },
  {
    name: "import",
    summary: "Import plex_autoscan's queue file (--from-plex-autoscan PATH) into autoscan's queue; --dry-run to look first",
    load: async () => (await import("./import.ts")).importCommand,
  },
  {
    name: "notify test",
    summary: "Send a test message to each notifier under NOTIFY (or --name N) and say what each answered",
    load: async () => (await import("./notify-test.ts")).notifyTestCommand,
  },
  {
    name: "backfill",
    summary: "Catch up from the *arr apps' history now: queue the imports, renames and deletes no webhook brought",
    load: async () => (await import("./backfill.ts")).backfillCommand,
  },
];

/** The command a table line names, loaded. */
export async function loadCommand(entry: CommandEntry): Promise<Command> {
  return { ...(await entry.load()), name: entry.name, summary: entry.summary };
}
