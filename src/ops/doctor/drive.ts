import { describeError } from "../../core/errors.ts";
import { fail, ok, skip, warn, type CheckResult } from "./check.ts";
import type { CheckFamily } from "./run-checks.ts";

/**
 * Google Drive monitoring (CLOUD.ENABLED): credentials present (service account key, rclone remote, or the token
 * `autoscan authorize` stored), Google issues an access token for them, the watched drive folders lead to paths Plex
 * knows; and rclone's remote control answers when RCLONE.RC_CACHE_REFRESH is on.
 */
export interface DriveProbe {
  /** What the credentials are (`OAuth client …`); rejects with a message that names the fix. */
  credentials(): Promise<string>;
  /** One Drive call with them (a refresh of the access token when it expired); rejects with the fix in the message.
   *  Absent at server start, where the monitor does it itself. */
  readonly connect?: () => Promise<void>;
  /** CLOUD.ALLOWED.FILE_PATHS */
  readonly filePaths: readonly string[];
  /** Whether a drive path is one of SERVER_PATH_MAPPINGS' forms (else it reaches Plex unchanged). */
  isMapped(drivePath: string): boolean;
}

export interface RcProbe {
  /** RC_URL without credentials, for messages. */
  readonly url: string;
  /** `rc/noop`; rejects with the reason. */
  ping(): Promise<void>;
}

export function driveFamily(probe: DriveProbe): CheckFamily {
  return { name: "drive", run: () => driveChecks(probe) };
}

export async function driveChecks(probe: DriveProbe): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  let described: string;
  try {
    described = await probe.credentials();
    out.push(ok("drive.credentials", "Drive credentials", `${described}.`));
  } catch (error) {
    out.push(
      fail("drive.credentials", "Drive credentials", describeError(error), "See the README's Google Drive section; 'autoscan authorize' stores a token."),
      skip("drive.token", "Drive token", "No usable credentials."),
    );
    described = "";
  }
  if (described !== "") {
    if (!probe.connect) out.push(skip("drive.token", "Drive token", "Checked by the Drive monitor itself at start."));
    else {
      try {
        await probe.connect();
        out.push(ok("drive.token", "Drive token", "Google issued an access token and Drive answered."));
      } catch (error) {
        out.push(fail("drive.token", "Drive token", describeError(error), "Run 'autoscan authorize' again (in Docker: docker exec -it autoscan autoscan authorize)."));
      }
    }
  }
  if (probe.filePaths.length === 0) {
    out.push(warn("drive.paths", "Drive folders", "CLOUD.ALLOWED.FILE_PATHS is empty: no Drive change is scanned.", 'List the drive folders to watch, e.g. ["My Drive/Media/"].'));
  } else {
    const unmapped = probe.filePaths.filter((path) => !probe.isMapped(path));
    out.push(
      unmapped.length === 0
        ? ok("drive.paths", "Drive folders", `${probe.filePaths.length} watched; each maps to a Plex folder.`)
        : warn(
            "drive.paths",
            "Drive folders",
            `Not a form in SERVER_PATH_MAPPINGS: ${unmapped.map((p) => `'${p}'`).join(", ")}; their changes reach Plex as drive paths, which no library holds.`,
            'Add the drive form to the mapping of its Plex folder, e.g. {"/data/Movies/": ["My Drive/Media/Movies/"]}.',
          ),
    );
  }
  return out;
}

export function rcFamily(probe: RcProbe): CheckFamily {
  return {
    name: "rclone-rc",
    async run() {
      try {
        await probe.ping();
        return [ok("rclone.rc", "rclone RC", `rclone's remote control answers at ${probe.url}.`)];
      } catch (error) {
        return [
          warn(
            "rclone.rc",
            "rclone RC",
            `rclone's remote control does not answer at ${probe.url}: ${describeError(error)}. File checks go on without cache refreshes.`,
            "Start the mount with --rc (and --rc-addr), or set RCLONE.RC_CACHE_REFRESH.RC_URL to its address.",
          ),
        ];
      }
    },
  };
}
