import type { DiskEntry } from "../../paths/disk-probe.ts";
import { isWindowsPath, parentFolder } from "../../paths/normalize.ts";
import { ok, warn, type CheckResult } from "./check.ts";

/**
 * `SERVER_ANCHORS`: each anchor file should be there. One that is not holds every folder under its own folder (no
 * scan, no emptied trash there) until it is back: a warning, since that is the anchor doing its job when a mount is
 * down, and a mistake when the file was never made. Each look goes through the disk probe with its timeout, so an
 * anchor on a hung mount is a warning after the timeout, never a hang.
 */
export function anchorChecks(anchors: readonly string[], look: (localPath: string) => Promise<DiskEntry>, timeoutSeconds: number): Promise<CheckResult[]> {
  return Promise.all(
    [...new Set(anchors)].map(async (anchor) => {
      const id = `anchor:${anchor}`;
      const dir = guardedFolder(anchor);
      const entry = await look(anchor).catch((): DiskEntry => "missing");
      if (entry === "file" || entry === "directory") return ok(id, "Anchor", `'${anchor}' is there: folders under '${dir}' go out.`);
      if (entry === "unanswered") {
        return warn(
          id,
          "Anchor",
          `The disk did not answer a look at '${anchor}' within ${timeoutSeconds} s (a hung mount?): folders under '${dir}' will wait until it answers.`,
          "Check that mount (rclone, NFS, SMB) on autoscan's side.",
        );
      }
      return warn(
        id,
        "Anchor",
        `Anchor '${anchor}' is missing: folders under '${dir}' will wait until it is back.`,
        `If the mount at '${dir}' is down, bring it back; if it is up, create the file on the mounted media (it must not exist on the empty mount point), or take it out of SERVER_ANCHORS.`,
      );
    }),
  );
}

/** The folder an anchor guards: the one it lies in. */
function guardedFolder(anchor: string): string {
  return parentFolder(isWindowsPath(anchor) ? anchor.replace(/\\/g, "/") : anchor);
}
