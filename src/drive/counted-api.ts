import type { DriveMetrics } from "../core/metrics.ts";
import type { DriveApi } from "./drive-api.ts";
import { GoogleCallError } from "./google-retry.ts";

/**
 * The Drive API with each call counted (`SERVER_METRICS`), once per call after its own retries: `ok`, or the kind of
 * failure Google's answer was classified as (`rate-limit`, `transient`, `auth`, `scope` …). A file or drive that is
 * gone (404) is an answer, counted as `ok`.
 */
export function countedDriveApi(api: DriveApi, metrics: Pick<DriveMetrics, "driveApiCall">): DriveApi {
  const counted = async <T>(method: string, call: () => Promise<T>): Promise<T> => {
    try {
      const value = await call();
      metrics.driveApiCall(method, undefined);
      return value;
    } catch (error) {
      metrics.driveApiCall(method, error instanceof GoogleCallError ? error.failure.kind : "other");
      throw error;
    }
  };
  return {
    getStartPageToken: (driveId) => counted("changes.getStartPageToken", () => api.getStartPageToken(driveId)),
    listChanges: (pageToken, driveId) => counted("changes.list", () => api.listChanges(pageToken, driveId)),
    getFile: (fileId) => counted("files.get", () => api.getFile(fileId)),
    getDrive: (driveId) => counted("drives.get", () => api.getDrive(driveId)),
    listDrives: () => counted("drives.list", () => api.listDrives()),
  };
}
