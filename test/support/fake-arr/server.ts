import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { resolveApp } from "./app-facts.ts";
import { givenKey, unauthorized } from "./auth.ts";
import { historyPage, historySince } from "./history.ts";
import { createNotificationStore } from "./notifications.ts";
import { recordBuilders } from "./record-builders.ts";
import { createRecordStore } from "./record-store.ts";
import { JSON_TYPE, type Reply } from "./replies.ts";
import { systemStatus } from "./system-status.ts";
import type { FakeArr, FakeArrOptions, FakeArrRequest, FakeReply } from "./types.ts";

/**
 * `startFakeArr`: the HTTP server on 127.0.0.1 (a free port), its routes under the API root, the key check, the
 * request log and `X-Application-Version` on every answer (§1); and the switches: starting up (503 with the app's
 * `errorMessage`, before the key check), down (the port closed, open connections cut, then reopened on the same
 * port), hung (requests taken, never answered), hung from a history page on, a new key, and injected answers; the
 * connections and health list (notifications.ts) answered from memory.
 */
export async function startFakeArr(options: FakeArrOptions): Promise<FakeArr> {
  const app = resolveApp(options);
  const { facts, v3, version } = app;
  let apiKey = options.apiKey ?? "fakearrkey0123456789abcdef0123456";
  let starting = false;
  let hang = false;
  let hangPage: number | undefined;
  const held: ServerResponse[] = [];
  const store = createRecordStore(app.root);
  const records = recordBuilders(app, store);
  const requests: FakeArrRequest[] = [];
  const injected: { match: RegExp; reply: FakeReply; times: number }[] = [];
  const notifications = createNotificationStore(app);

  function route(req: FakeArrRequest): Reply | Promise<Reply> {
    // The start-up middleware comes before authentication (Startup.cs).
    if (starting) {
      return { status: 503, contentType: JSON_TYPE, body: JSON.stringify({ errorMessage: `${facts.appName} is starting up, please try again later` }) };
    }
    if (!req.path.startsWith("/api/")) return { status: 404, body: "" };
    if (givenKey(v3, req) !== apiKey) return unauthorized(v3);
    const injection = injected.find((entry) => entry.times > 0 && entry.match.test(`${req.method} ${req.path}`));
    if (injection) {
      injection.times -= 1;
      return injection.reply;
    }
    const path = req.path.replace(/\/+$/, "");
    const notification = notificationRoute(req, path);
    if (notification) return notification;
    if (req.method !== "GET") return { status: 405, body: "" };
    if (path === `${facts.apiRoot}/system/status`) return systemStatus(app, started);
    if (path === `${facts.apiRoot}/history`) return historyPage(app, store, req.query);
    if (path === `${facts.apiRoot}/history/since`) return historySince(app, store, req.query);
    if (path === `${facts.apiRoot}/rootfolder`) return rootFolders();
    return { status: 404, body: "" };
  }

  /** `…/rootfolder`: `RootFolderResource`s (id, path, accessible, freeSpace, unmappedFolders; Lidarr and Readarr add a name). */
  function rootFolders(): Reply {
    const paths = options.rootFolders ?? [`${app.root}/`];
    const body = paths.map((path, index) => ({
      id: index + 1,
      ...(facts.apiRoot === "/api/v1" ? { name: path.replace(/\/+$/, "").split("/").pop() ?? path } : {}),
      path,
      accessible: true,
      freeSpace: 1_000_000_000_000,
      unmappedFolders: [],
    }));
    return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(body) };
  }

  /** `…/notification` (list, create, one by id, update, delete, schema, test) and `…/health`. */
  function notificationRoute(req: FakeArrRequest, path: string): Reply | Promise<Reply> | undefined {
    const root = `${facts.apiRoot}/notification`;
    const { method } = req;
    if (path === `${facts.apiRoot}/health`) return method === "GET" ? notifications.health() : { status: 405, body: "" };
    if (path === `${root}/schema`) return method === "GET" ? notifications.schema() : { status: 405, body: "" };
    if (path === `${root}/test`) return method === "POST" ? notifications.test(req.body) : { status: 405, body: "" };
    if (path === root) {
      if (method === "GET") return notifications.list();
      if (method === "POST") return notifications.create(req.body);
      if (method === "PUT") return notifications.update(undefined, req.body, req.query);
      return { status: 405, body: "" };
    }
    const byId = path.startsWith(`${root}/`) ? /^\d{1,10}$/.exec(path.slice(root.length + 1)) : null;
    if (!byId) return undefined;
    const id = Number(byId[0]);
    if (method === "GET") return notifications.get(id);
    if (method === "PUT") return notifications.update(id, req.body, req.query);
    if (method === "DELETE") return notifications.remove(id);
    return { status: 405, body: "" };
  }

  function send(res: ServerResponse, reply: Reply): void {
    res.statusCode = reply.status;
    res.setHeader("X-Application-Version", version);
    if (reply.contentType) res.setHeader("Content-Type", reply.contentType);
    if (reply.stream) return reply.stream(res);
    res.setHeader("Content-Length", Buffer.byteLength(reply.body ?? ""));
    res.end(reply.body ?? "");
  }

  const started = Date.now();
  const sockets = new Set<Socket>();
  const server = createServer((incoming, res) => {
    const url = new URL(incoming.url ?? "/", "http://127.0.0.1");
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const req: FakeArrRequest = {
        method: incoming.method ?? "GET",
        path: url.pathname,
        rawQuery: (incoming.url ?? "").split("?")[1] ?? "",
        query: url.searchParams,
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(req);
      if (hang) return void held.push(res);
      const page = Number(url.searchParams.get("page") ?? "1");
      if (hangPage !== undefined && /\/history$/i.test(url.pathname) && page >= hangPage) return void held.push(res);
      void Promise.resolve(route(req)).then(
        (reply) => send(res, reply),
        (error: unknown) => send(res, { status: 500, contentType: JSON_TYPE, body: JSON.stringify({ message: String(error) }) }),
      );
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  let listening = true;

  function listen(on: number): Promise<void> {
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(on, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  }

  function stop(): Promise<void> {
    if (!listening) return Promise.resolve();
    listening = false;
    return new Promise((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    type: options.type,
    appName: facts.appName,
    apiRoot: facts.apiRoot,
    get apiKey() {
      return apiKey;
    },
    version,
    requests,
    get size() {
      return store.rows.length;
    },
    addImport: records.addImport,
    addRename: records.addRename,
    addDelete: records.addDelete,
    addGrab: records.addGrab,
    addOther: records.addOther,
    addMany(n, make) {
      const first = store.nextId();
      for (let index = 0; index < n; index += 1) records.add(make(index));
      return { first, last: store.lastId() };
    },
    deleteItem: (path) => store.deleteItem(path),
    setStarting: (value) => void (starting = value),
    async setDown(down) {
      if (down) return stop();
      if (listening) return;
      await listen(port);
      listening = true;
    },
    setKey: (value) => void (apiKey = value),
    setHang(value) {
      hang = value;
      if (!value) for (const res of held.splice(0)) res.destroy();
    },
    hangFromPage(page) {
      hangPage = page;
      if (page === undefined) for (const res of held.splice(0)) res.destroy();
    },
    answerNext: (match, reply, times = 1) => void injected.push({ match, reply, times }),
    get notifications() {
      return notifications.snapshot();
    },
    notificationTests: notifications.tests,
    addNotification: (input) => notifications.seed(input),
    setNotificationFailing: (id, failing) => notifications.setFailing(id, failing),
    addHealth: (entry) => notifications.addHealth({ ...entry }),
    close: stop,
  };
}
