import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/**
 * This process's name among instances sharing one database: `<host>-<pid>-<4 hex>`. In a container the host name is
 * the container's, so two replicas differ; the random part tells a restarted process from the one before it (a pid
 * is often 1 in a container).
 */
export function newInstanceId(host: string = hostname(), pid: number = process.pid): string {
  const safeHost = host.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 40) || "autoscan";
  return `${safeHost}-${String(pid)}-${randomBytes(2).toString("hex")}`;
}
