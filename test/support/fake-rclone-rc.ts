import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * rclone's remote control (`rclone rcd` / `--rc`) as far as autoscan uses it: `POST /vfs/refresh` with a JSON body
 * `{"dir": "a/b", "fs": "gdrive:"}` answers `{"result": {"a/b": "OK"}}`, or the error text for that folder when the
 * VFS does not know it (`file does not exist`). With several mounts and no `fs`, rclone answers 500
 * `more than one VFS active - need "fs" parameter`; `vfs/list` names them. Optional Basic auth (`--rc-user/--rc-pass`).
 */
export interface FakeRcloneRc {
  readonly url: string;
  /** Folders the VFS knows, per fs ("" = the only one). */
  readonly known: Map<string, Set<string>>;
  readonly calls: { path: string; body: Record<string, unknown>; authorization?: string }[];
  close(): Promise<void>;
}

export async function startFakeRcloneRc(options: { vfses?: string[]; user?: string; pass?: string } = {}): Promise<FakeRcloneRc> {
  const vfses = options.vfses ?? [""];
  const known = new Map(vfses.map((fs) => [fs, new Set<string>([""])]));
  const calls: FakeRcloneRc["calls"] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const path = (req.url ?? "/").slice(1);
    calls.push({ path, body, authorization: req.headers.authorization });
    const send = (status: number, answer: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer, null, "\t"));
    };
    if (options.user) {
      const expected = `Basic ${Buffer.from(`${options.user}:${options.pass ?? ""}`).toString("base64")}`;
      if (req.headers.authorization !== expected) return send(401, { error: "authentication required", status: 401 });
    }
    if (path === "vfs/list") return send(200, { vfses });
    if (path !== "vfs/refresh") return send(404, { error: "couldn't find method", path, status: 404 });
    const fs = typeof body.fs === "string" ? body.fs : undefined;
    if (fs === undefined && vfses.length > 1) {
      return send(500, { error: 'more than one VFS active - need "fs" parameter', input: body, path, status: 500 });
    }
    const dirs = known.get(fs ?? vfses[0] ?? "");
    if (!dirs) return send(500, { error: `no VFS found with name "${fs}"`, input: body, path, status: 500 });
    const dir = typeof body.dir === "string" ? body.dir : "";
    send(200, { result: { [dir]: dirs.has(dir) ? "OK" : "file does not exist" } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    known,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
