import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../core/errors.ts";
import { expandVars, resolveSettings } from "./settings.ts";

const INSTALL = "/opt/autoscan";

describe("settings: flag > environment > default (plex_autoscan's precedence)", () => {
  it("defaults: the config under the install dir, every data file beside it", () => {
    const settings = resolveSettings({}, {}, INSTALL);
    expect(settings).toMatchObject({
      configPath: "/opt/autoscan/config/config.json",
      dataDir: "/opt/autoscan/config",
      logFile: "/opt/autoscan/config/autoscan.log",
      queueFile: "/opt/autoscan/config/queue.db",
      cacheFile: "/opt/autoscan/config/cache.db",
      logLevel: "info",
      logFormat: "classic",
      dockerHost: undefined,
    });
    expect(Object.values(settings.origin).every((origin) => origin === "default")).toBe(true);
  });

  // [setting, flag, AUTOSCAN_* variable, PLEX_AUTOSCAN_* variable, value, what the Settings field becomes]
  const cases: [keyof ReturnType<typeof resolveSettings>, string, string, string, (v: string) => string][] = [
    ["configPath", "config", "AUTOSCAN_CONFIG", "PLEX_AUTOSCAN_CONFIG", (v) => `/etc/${v}/config.json`],
    ["logFile", "logfile", "AUTOSCAN_LOGFILE", "PLEX_AUTOSCAN_LOGFILE", (v) => `/var/log/${v}.log`],
    ["queueFile", "queuefile", "AUTOSCAN_QUEUEFILE", "PLEX_AUTOSCAN_QUEUEFILE", (v) => `/var/lib/${v}.db`],
    ["cacheFile", "cachefile", "AUTOSCAN_CACHEFILE", "PLEX_AUTOSCAN_CACHEFILE", (v) => `/var/cache/${v}.db`],
  ];

  describe.each(cases)("%s (--%s, %s, %s)", (field, flag, ours, theirs, make) => {
    it("the flag wins over both variables", () => {
      const settings = resolveSettings({ [flag]: make("flag") }, { [ours]: make("ours"), [theirs]: make("theirs") }, INSTALL);
      expect(settings[field]).toBe(make("flag"));
    });
    it("AUTOSCAN_* wins over PLEX_AUTOSCAN_*", () => {
      expect(resolveSettings({}, { [ours]: make("ours"), [theirs]: make("theirs") }, INSTALL)[field]).toBe(make("ours"));
    });
    it("plex_autoscan's variable alone works", () => {
      expect(resolveSettings({}, { [theirs]: make("theirs") }, INSTALL)[field]).toBe(make("theirs"));
    });
    it("an empty variable counts as unset", () => {
      expect(resolveSettings({}, { [ours]: "", [theirs]: make("theirs") }, INSTALL)[field]).toBe(make("theirs"));
    });
  });

  it("--loglevel > AUTOSCAN_LOGLEVEL > PLEX_AUTOSCAN_LOGLEVEL > INFO", () => {
    const env = { AUTOSCAN_LOGLEVEL: "WARNING", PLEX_AUTOSCAN_LOGLEVEL: "ERROR" };
    expect(resolveSettings({ loglevel: "DEBUG" }, env, INSTALL).logLevel).toBe("debug");
    expect(resolveSettings({}, env, INSTALL).logLevel).toBe("warn");
    expect(resolveSettings({}, { PLEX_AUTOSCAN_LOGLEVEL: "ERROR" }, INSTALL).logLevel).toBe("error");
  });

  it.each([
    ["WARN", "warn"],
    ["INFO", "info"],
    ["DEBUG", "debug"],
    ["warning", "warn"],
    ["Error", "error"],
  ])("accepts plex_autoscan's level name %s", (raw, level) => {
    expect(resolveSettings({ loglevel: raw }, {}, INSTALL).logLevel).toBe(level);
  });

  it("rejects an unknown level or format as a usage error that lists the choices", () => {
    expect(() => resolveSettings({ loglevel: "LOUD" }, {}, INSTALL)).toThrow(UsageError);
    expect(() => resolveSettings({ loglevel: "LOUD" }, {}, INSTALL)).toThrow(/DEBUG, INFO, WARNING or ERROR/);
    expect(() => resolveSettings({}, { AUTOSCAN_LOG_FORMAT: "xml" }, INSTALL)).toThrow(/"classic" or "json"/);
  });

  it("--log-format > AUTOSCAN_LOG_FORMAT > classic", () => {
    expect(resolveSettings({ "log-format": "classic" }, { AUTOSCAN_LOG_FORMAT: "json" }, INSTALL).logFormat).toBe("classic");
    expect(resolveSettings({}, { AUTOSCAN_LOG_FORMAT: "JSON" }, INSTALL).logFormat).toBe("json");
  });

  it("records where each setting came from", () => {
    const settings = resolveSettings({ config: "/c/config.json" }, { AUTOSCAN_QUEUEFILE: "q.db" }, INSTALL);
    expect(settings.origin).toMatchObject({ config: "flag", queueFile: "env", cacheFile: "default", dataDir: "default" });
  });
});

describe("the data directory", () => {
  it("defaults to the config file's folder, wherever the config is", () => {
    const settings = resolveSettings({ config: "/srv/autoscan/conf/config.json" }, {}, INSTALL);
    expect(settings.dataDir).toBe("/srv/autoscan/conf");
    expect(settings.queueFile).toBe("/srv/autoscan/conf/queue.db");
    expect(settings.cacheFile).toBe("/srv/autoscan/conf/cache.db");
    expect(settings.logFile).toBe("/srv/autoscan/conf/autoscan.log");
  });

  it("holds relative file names given by flag or variable: never the working directory", () => {
    const settings = resolveSettings(
      { config: "/srv/a/config.json", queuefile: "queue2.db" },
      { PLEX_AUTOSCAN_CACHEFILE: "cache2.db", AUTOSCAN_LOGFILE: "logs/autoscan.log" },
      INSTALL,
    );
    expect(settings.queueFile).toBe("/srv/a/queue2.db");
    expect(settings.cacheFile).toBe("/srv/a/cache2.db");
    expect(settings.logFile).toBe("/srv/a/logs/autoscan.log");
    for (const file of [settings.queueFile, settings.cacheFile, settings.logFile]) {
      expect(file?.startsWith(`${process.cwd()}/`)).toBe(false);
    }
  });

  it("is --data-dir, else AUTOSCAN_DATA_DIR", () => {
    const env = { AUTOSCAN_DATA_DIR: "/data/env" };
    expect(resolveSettings({ "data-dir": "/data/flag" }, env, INSTALL).queueFile).toBe("/data/flag/queue.db");
    expect(resolveSettings({ config: "/c/config.json" }, env, INSTALL).queueFile).toBe("/data/env/queue.db");
  });

  it("leaves absolute file names where they are", () => {
    const settings = resolveSettings({ queuefile: "/elsewhere/q.db" }, { AUTOSCAN_DATA_DIR: "/data" }, INSTALL);
    expect(settings.queueFile).toBe("/elsewhere/q.db");
  });

  it.each(["none", "off", "NONE", "-", "false"])("--logfile %s switches the log file off", (value) => {
    expect(resolveSettings({ logfile: value }, {}, INSTALL).logFile).toBeUndefined();
  });
});

describe("$VAR expansion (as Python's os.path.expandvars did for these settings)", () => {
  const env = { HOME: "/home/seed", APPDATA: "/srv/appdata" };

  it("expands $VAR and ${VAR} in flags and variables", () => {
    const settings = resolveSettings(
      { config: "$HOME/.config/autoscan/config.json" },
      { ...env, AUTOSCAN_QUEUEFILE: "${APPDATA}/autoscan/queue.db", PLEX_AUTOSCAN_LOGFILE: "$APPDATA/log/autoscan.log" },
      INSTALL,
    );
    expect(settings.configPath).toBe("/home/seed/.config/autoscan/config.json");
    expect(settings.queueFile).toBe("/srv/appdata/autoscan/queue.db");
    expect(settings.logFile).toBe("/srv/appdata/log/autoscan.log");
  });

  it("leaves an unknown variable as written", () => {
    expect(expandVars("$NOPE/x/${ALSO_NOPE}/y", env)).toBe("$NOPE/x/${ALSO_NOPE}/y");
  });

  it("does not touch a lone $ or a name that cannot be a variable", () => {
    expect(expandVars("/a/$/b/$1/c", env)).toBe("/a/$/b/$1/c");
  });

  it("expands a name only as far as it goes ($HOME_DIR is one name; ${HOME}_DIR is HOME)", () => {
    expect(expandVars("$HOME_DIR|${HOME}_DIR", env)).toBe("$HOME_DIR|/home/seed_DIR");
  });
});

describe("DOCKER_HOST", () => {
  it("is passed through for the exec scanner; empty means the default socket", () => {
    expect(resolveSettings({}, { DOCKER_HOST: "tcp://127.0.0.1:2375" }, INSTALL).dockerHost).toBe("tcp://127.0.0.1:2375");
    expect(resolveSettings({}, { DOCKER_HOST: "" }, INSTALL).dockerHost).toBeUndefined();
  });
});

it("a relative --config is taken from the working directory (what the user typed), the data beside it", () => {
  const settings = resolveSettings({ config: "conf/config.json" }, {}, INSTALL);
  expect(settings.configPath).toBe(join(process.cwd(), "conf", "config.json"));
  expect(settings.queueFile).toBe(join(process.cwd(), "conf", "queue.db"));
});
