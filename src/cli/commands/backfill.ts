import { loadConfig } from "../../config/load.ts";
import { resolveSettings } from "../../config/settings.ts";
import { UsageError, describeError } from "../../core/errors.ts";
import { parseSince } from "../../web/routes/backfill.ts";
import { booleanFlag, stringFlag, type CommandSpec, type CommandIO } from "../command.ts";

/**
 * `autoscan backfill --since <time|duration>`: asks the running server to read the *arr apps' history (`ARR`) back to
 * that time now and queue what no webhook brought (the server holds the queue, so the read runs there). Progress is
 * one line per app that updates in place on a terminal; `--dry-run` lists what would be queued and queues nothing.
 */
export const backfillCommand: CommandSpec = {
  usage: "autoscan backfill [--since TIME|DURATION] [--app NAME] [--dry-run] [--config PATH]",
  description:
    "The server must be running (it holds the queue): this asks it through its API. Without --since each app is read " +
    "back to where the last read ended. Nothing is queued twice: a folder requested since the history record (by its " +
    "webhook or an earlier read) is left out. Exit codes: 0 every app was read; 1 an app could not be read or the " +
    "server did not answer; 2 bad usage.",
  options: { since: { type: "string" }, app: { type: "string" }, "dry-run": { type: "boolean" } },
  optionHelp: {
    since: "TIME|DURATION  read back to an ISO 8601 time (2026-11-24T18:00:00Z) or a duration ago (90m, 12h, 2d, 1w)",
    app: "NAME  only this app of ARR",
    "dry-run": "list what would be queued; queue nothing, move no cursor",
  },
  async run({ values, io }) {
    const since = stringFlag(values, "since");
    if (since !== undefined) {
      const parsed = parseSince(since, Date.now());
      if (typeof parsed === "string") throw new UsageError(`--${parsed}`);
    }
    const settings = resolveSettings(values, io.env, io.installDir);
    const loaded = await loadConfig(settings.configPath, io.env, false);
    if (loaded.kind !== "loaded") return 2;
    const { config } = loaded;
    const app = stringFlag(values, "app");
    const names = Object.keys(config.ARR);
    if (names.length === 0) {
      io.stderr.write(`No *arr app is configured: add them under ARR in ${settings.configPath} (see the README, "Catching up").\n`);
      return 1;
    }
    if (app !== undefined && !names.includes(app)) throw new UsageError(`--app: no app '${app}' under ARR (known: ${names.join(", ")})`);
    if (config.SERVER_PASS === "") {
      io.stderr.write("SERVER_PASS is not set, so there is no running server to ask. Set it and start autoscan.\n");
      return 1;
    }
    const host = config.SERVER_IP === "0.0.0.0" || config.SERVER_IP === "" ? "127.0.0.1" : config.SERVER_IP === "::" ? "[::1]" : config.SERVER_IP;
    const base = `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${config.SERVER_PORT}`;
    const form = new URLSearchParams({ cmd: "backfill" });
    if (since !== undefined) form.set("since", since);
    if (app !== undefined) form.set("app", app);
    if (booleanFlag(values, "dry-run")) form.set("dry_run", "1");
    return ask(`${base}${config.SERVER_URL_BASE}/api/${encodeURIComponent(config.SERVER_PASS)}`, base, form, io, booleanFlag(values, "dry-run"));
  },
};

interface AppLine {
  readonly app: string;
  readonly ok: boolean;
  readonly records: number;
  readonly queued: number;
  readonly covered: number;
  readonly error?: string;
}

async function ask(url: string, base: string, form: URLSearchParams, io: CommandIO, dryRun: boolean): Promise<number> {
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", body: form, signal: io.shutdownSignal });
  } catch (error) {
    io.stderr.write(`No answer from autoscan at ${base}: ${describeError(error)}. Is 'autoscan server' running? The backfill runs inside it.\n`);
    return 1;
  }
  if (!response.ok || !response.body) {
    io.stderr.write(`autoscan at ${base} answered ${response.status}${response.status === 404 ? " (is SERVER_PASS the server's?)" : ""}.\n`);
    return 1;
  }
  const live = io.stderr.isTTY === true;
  let pending = "";
  let progressShown = false;
  let result = 1;
  const decoder = new TextDecoder();
  const handle = (line: string): void => {
    if (!line.trim()) return;
    const event = JSON.parse(line) as Record<string, unknown>;
    if (event.success === false && event.kind === undefined) {
      io.stderr.write(`${String(event.msg)}\n`);
      return;
    }
    if (event.kind === "progress") {
      const text = `${String(event.app)}: ${String(event.records)} record(s) read, ${String(event.queued)} to queue, ${String(event.covered)} already covered`;
      if (live) {
        io.stderr.write(`\r\u001b[2K${text}`);
        progressShown = true;
      }
      return;
    }
    if (event.kind === "request") {
      if (progressShown) io.stderr.write("\r\u001b[2K");
      progressShown = false;
      io.stdout.write(`${dryRun ? "would queue" : "queued"}  ${String(event.path)}  (${String(event.event)}, ${String(event.app)}, ${String(event.date)})\n`);
      return;
    }
    if (event.kind === "done") {
      if (progressShown) io.stderr.write("\n");
      const apps = (event.apps ?? []) as AppLine[];
      for (const app of apps) {
        io.stderr.write(
          app.ok
            ? `${app.app}: ${app.records} record(s) read; ${app.queued} ${dryRun ? "would be queued" : "queued"}, ${app.covered} already covered.\n`
            : `${app.app}: not read: ${app.error ?? "unknown error"}\n`,
        );
      }
      if (typeof event.msg === "string") io.stderr.write(`${event.msg}\n`);
      result = event.success === true ? 0 : 1;
    }
  };
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk as Uint8Array, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) handle(line);
  }
  handle(pending);
  return result;
}
