import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../test/support/free-port.ts";
import { classifyConnectionFailure, connectionFailureWords } from "./connection-failure.ts";
import { httpCall, HttpTimeoutError } from "./http-call.ts";

/**
 * Each kind from a real socket where one can be made here (a closed port, a server that never answers, one that
 * hangs up, one that speaks another protocol, a name that cannot resolve); the connection that never completes needs
 * a network that drops packets: test/doctor-unreachable.test.ts makes one in a namespace of its own.
 */
const servers: Server[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A TCP server on 127.0.0.1 that does `onConnection` with each connection; its URL. */
async function tcpServer(onConnection: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${String(address.port)}`;
}

async function failureOf(url: string, timeoutMs = 300): Promise<unknown> {
  try {
    await httpCall({ method: "GET", url: `${url}/identity`, timeoutMs, maxBytes: 1024 });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

describe("classifyConnectionFailure: real sockets", () => {
  it("a closed port is refused", async () => {
    const failure = classifyConnectionFailure(await failureOf(`http://127.0.0.1:${String(await freePort())}`));
    expect(failure).toEqual({ kind: "refused" });
    expect(connectionFailureWords({ kind: "refused" })).toBe("connection refused (ECONNREFUSED): nothing listens there (down, or the wrong port)");
  });

  it("a server that takes the connection and never answers is a timeout after the connection", async () => {
    const url = await tcpServer(() => {});
    const error = await failureOf(url);
    expect(error).toBeInstanceOf(HttpTimeoutError);
    expect((error as Error).message).toBe("connected, but no answer within 0.3 s");
    expect(classifyConnectionFailure(error)).toEqual({ kind: "timeout", phase: "answer" });
  });

  it("a server that hangs up without a word cut the connection", async () => {
    const url = await tcpServer((socket) => socket.destroy());
    expect(classifyConnectionFailure(await failureOf(url))).toMatchObject({ kind: "cut", code: "ECONNRESET" });
  });

  it("a server that speaks another protocol answered, but not in HTTP", async () => {
    const url = await tcpServer((socket) => socket.end("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"));
    const failure = classifyConnectionFailure(await failureOf(url));
    expect(failure).toMatchObject({ kind: "not-http" });
    expect(failure?.kind === "not-http" && failure.code).toMatch(/^HPE_/);
  });

  it("a name that does not resolve is a DNS failure naming the host", async () => {
    const failure = classifyConnectionFailure(await failureOf("http://plex.autoscan-test.invalid:32400", 10_000));
    expect(failure).toMatchObject({ kind: "dns", hostname: "plex.autoscan-test.invalid" });
    if (failure) expect(connectionFailureWords(failure)).toMatch(/^plex\.autoscan-test\.invalid does not resolve \((ENOTFOUND|EAI_AGAIN)/);
  });

  it("an answer is no connection failure, however it was refused after", async () => {
    const url = await tcpServer((socket) => socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot here."));
    const answer = await httpCall({ method: "GET", url, timeoutMs: 1000, maxBytes: 1024 });
    expect(answer.status).toBe(404);
    // What a client throws for that answer: no socket error along its chain.
    expect(classifyConnectionFailure(new Error("Plex answered 404 to GET / at http://127.0.0.1"))).toBeUndefined();
  });
});

describe("classifyConnectionFailure: the shapes other callers hand over", () => {
  it.each([
    ["a client's error with the socket's under cause", new Error("Plex is unreachable", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) }), { kind: "refused" }],
    ["http-call's timeout before the connection completed, wrapped", new Error("Plex did not answer", { cause: new HttpTimeoutError("no answer within 1 s", "connect") }), { kind: "timeout", phase: "connect" }],
    ["the kernel's connect timeout", Object.assign(new Error("connect ETIMEDOUT 10.0.0.9:32400"), { code: "ETIMEDOUT" }), { kind: "timeout", phase: "connect" }],
    ["AbortSignal.timeout()", Object.assign(new Error("The operation was aborted due to timeout"), { name: "TimeoutError" }), { kind: "timeout", phase: "connect" }],
    ["Node's try of each address of a name", new AggregateError([Object.assign(new Error("connect ECONNREFUSED ::1:32400"), { code: "ECONNREFUSED" })]), { kind: "refused" }],
    ["no route", Object.assign(new Error("connect EHOSTUNREACH 192.168.1.250:32400"), { code: "EHOSTUNREACH" }), { kind: "no-route", code: "EHOSTUNREACH" }],
    ["a certificate for another name", Object.assign(new Error("Hostname/IP does not match certificate's altnames"), { code: "ERR_TLS_CERT_ALTNAME_INVALID" }), { kind: "tls", code: "ERR_TLS_CERT_ALTNAME_INVALID" }],
  ])("%s", (_, error, expected) => {
    expect(classifyConnectionFailure(error)).toEqual(expected);
  });

  it("words a timeout by what never came", () => {
    expect(connectionFailureWords({ kind: "timeout", phase: "connect" }, 10)).toBe(
      "no answer within 10 s: the connection never completed (a wrong address, or a firewall dropping it)",
    );
    expect(connectionFailureWords({ kind: "timeout", phase: "answer" }, 10)).toBe("no answer within 10 s: it connected, but no answer came (the server hangs?)");
  });
});
