import type { FakeApp } from "./app-facts.ts";
import { JSON_TYPE, type Reply } from "./replies.ts";

/** `GET …/system/status` (§1): the app's name and version, and when this fake started (`started`, ms). */
export function systemStatus(app: FakeApp, started: number): Reply {
  const { type, facts, v3, version } = app;
  const body = {
    appName: facts.appName,
    instanceName: facts.appName,
    version,
    buildTime: "2026-01-01T00:00:00Z",
    isDebug: false,
    isProduction: true,
    isAdmin: false,
    isUserInteractive: false,
    startupPath: `/app/${facts.appName.toLowerCase()}/bin`,
    appData: "/config",
    osName: "ubuntu",
    isDocker: true,
    isLinux: true,
    branch: v3 ? "main" : type === "readarr" ? "develop" : "main",
    authentication: "forms",
    urlBase: "",
    startTime: new Date(started).toISOString().replace(/\.\d+Z$/, "Z"),
  };
  return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(body) };
}
