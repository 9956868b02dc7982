import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * deploy/autoscan.service and its drop-in for the sudo scanner mode, deploy/autoscan-sudo.conf: systemd accepts both
 * (`systemd-analyze verify`, which needs no running systemd), and the drop-in undoes every setting that keeps sudo
 * from gaining privileges. `systemd-analyze` comes with Debian's `systemd` package (.ci/run installs it); without it
 * the verify tests are skipped loudly, or fail where CI requires them (AUTOSCAN_REQUIRE_SYSTEMD_ANALYZE=1).
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const UNIT = join(ROOT, "deploy", "autoscan.service");
const SUDO_DROP_IN = join(ROOT, "deploy", "autoscan-sudo.conf");

/** systemd.exec(5), NoNewPrivileges=: these settings turn it on whatever NoNewPrivileges= says (systemd 252 … 257). */
const IMPLY_NO_NEW_PRIVILEGES = [
  "DynamicUser",
  "LockPersonality",
  "MemoryDenyWriteExecute",
  "PrivateDevices",
  "ProtectClock",
  "ProtectHostname",
  "ProtectKernelLogs",
  "ProtectKernelModules",
  "ProtectKernelTunables",
  "RestrictAddressFamilies",
  "RestrictNamespaces",
  "RestrictRealtime",
  "RestrictSUIDSGID",
  "SystemCallArchitectures",
  "SystemCallFilter",
  "SystemCallLog",
];

/**
 * key → last value of a unit file's [Service] section. Later assignments win, as in systemd for the settings checked
 * here (an empty value resets a list setting; a drop-in's value follows the unit's).
 */
function serviceSettings(path: string): Map<string, string> {
  const settings = new Map<string, string>();
  let section = "";
  for (const raw of readFileSync(path, "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? "";
      continue;
    }
    const eq = line.indexOf("=");
    if (section === "Service" && eq > 0) settings.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return settings;
}

const isTrue = (value: string | undefined): boolean => value !== undefined && /^(1|yes|true|on)$/i.test(value);
/** Left on: set to anything but a false boolean or the empty value (which resets a list setting). */
const isOn = (value: string | undefined): boolean => value !== undefined && value !== "" && !/^(0|no|false|off)$/i.test(value);

describe("the systemd unit", () => {
  const unit = serviceSettings(UNIT);
  const dropIn = serviceSettings(SUDO_DROP_IN);
  const merged = new Map([...unit, ...dropIn]);

  it("reloads with SIGHUP and writes only the config's folder", () => {
    expect(unit.get("ExecReload")).toBe("/bin/kill -HUP $MAINPID");
    const configDir = dirname(readConfigPath(UNIT));
    expect(configDir).toBe("/opt/autoscan/config");
    expect(unit.get("ReadWritePaths")).toBe(configDir);
    expect(unit.get("ProtectSystem")).toBe("strict");
    expect(isTrue(unit.get("NoNewPrivileges"))).toBe(true);
  });

  it("the sudo drop-in lets sudo gain privileges: NoNewPrivileges off, and every setting that implies it undone", () => {
    expect(isTrue(merged.get("NoNewPrivileges"))).toBe(false);
    const stillOn = IMPLY_NO_NEW_PRIVILEGES.filter((key) => isOn(merged.get(key)));
    expect(stillOn, "settings that turn NoNewPrivileges on again under the sudo drop-in").toEqual([]);
    // sudo needs its capabilities: a bounding set the unit empties must be whole again.
    if (unit.has("CapabilityBoundingSet")) expect(merged.get("CapabilityBoundingSet")).toBe("~");
    // The scanner writes Plex's database from inside autoscan's sandbox.
    expect(dropIn.get("ReadWritePaths")).toContain("/var/lib/plexmediaserver");
  });
});

/** AUTOSCAN_CONFIG from the unit's Environment= lines (several may appear; the map above keeps only the last). */
function readConfigPath(path: string): string {
  const match = /^Environment=AUTOSCAN_CONFIG=(\S+)$/m.exec(readFileSync(path, "utf8"));
  return match?.[1] ?? "";
}

const analyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
const hasAnalyze = analyze.status === 0;
const requireAnalyze = process.env.AUTOSCAN_REQUIRE_SYSTEMD_ANALYZE === "1";
if (!hasAnalyze && !requireAnalyze) {
  console.warn("\n*** SKIPPED systemd-analyze verify: systemd-analyze is not installed (Debian: apt-get install systemd) ***\n");
}

(hasAnalyze || requireAnalyze ? describe : describe.skip)("systemd-analyze verify", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Verify as systemd would load the unit from a folder with these drop-ins; any line printed is a finding. */
  function verify(dropIns: Record<string, string>): { status: number | null; output: string } {
    const dir = mkdtempSync(join(tmpdir(), "autoscan-unit-"));
    dirs.push(dir);
    copyFileSync(UNIT, join(dir, "autoscan.service"));
    mkdirSync(join(dir, "autoscan.service.d"));
    for (const [name, source] of Object.entries(dropIns)) copyFileSync(source, join(dir, "autoscan.service.d", name));
    const result = spawnSync("systemd-analyze", ["verify", "--man=no", "autoscan.service"], {
      encoding: "utf8",
      timeout: 20_000,
      // The trailing ":" keeps the built-in unit paths after ours.
      env: { ...process.env, SYSTEMD_UNIT_PATH: `${dir}:`, SYSTEMD_LOG_COLOR: "0" },
    });
    if (result.error) throw result.error;
    return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
  }

  it("accepts the unit without a warning", () => {
    expect(verify({})).toEqual({ status: 0, output: "" });
  });

  it("accepts the unit with the sudo drop-in", () => {
    expect(verify({ "sudo.conf": SUDO_DROP_IN })).toEqual({ status: 0, output: "" });
  });
});
