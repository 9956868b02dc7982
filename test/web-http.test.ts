import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../src/web/server.ts";
import type { ScanSink } from "../src/core/scan.ts";
import { TEST_PASS, buildWebApp } from "./support/web-builders.ts";

/**
 * The limits over a real socket, where the body is read from Node's request stream: size caps with and without
 * Content-Length, a body that never finishes (request timeout), a client that hangs up mid-body.
 */
const harness = buildWebApp({ maxBodyBytes: 4096 });
let server: WebServer;
beforeAll(async () => {
  server = await startWebServer({ app: harness.app, hostname: "127.0.0.1", port: 0, requestTimeoutMs: 1500 });
});
afterAll(() => server.close());

/** Writes raw bytes (optionally in parts, with pauses) and collects everything until the server closes or answers. */
function exchange(parts: (string | Buffer)[], options: { pauseMs?: number; end?: boolean; waitMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    let received = "";
    const finish = () => {
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(finish, options.waitMs ?? 5000);
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (/\r\n\r\n/.test(received) && /content-length: (\d+)/i.test(received)) {
        const length = Number(/content-length: (\d+)/i.exec(received)?.[1]);
        if (received.length >= received.indexOf("\r\n\r\n") + 4 + length) {
          clearTimeout(timer);
          finish();
        }
      }
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on("error", () => undefined);
    void (async () => {
      for (const part of parts) {
        socket.write(part);
        if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
      }
      if (options.end) socket.end();
    })();
  });
}

const head = (extra: string) => `POST /${TEST_PASS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}\r\n`;
const download = JSON.stringify({
  eventType: "Download",
  series: { path: "/tv/Show" },
  episodeFile: { relativePath: "Season 01/Show - S01E01.mkv" },
});

describe("body limits over real HTTP", () => {
  it("reads a normal body from the socket, with Content-Length and chunked", async () => {
    const plain = await exchange([head(`Content-Length: ${download.length}\r\n`), download]);
    expect(plain).toMatch(/^HTTP\/1\.1 200/);
    const chunked = await exchange([head("Transfer-Encoding: chunked\r\n"), `${download.length.toString(16)}\r\n${download}\r\n0\r\n\r\n`]);
    expect(chunked).toMatch(/^HTTP\/1\.1 200/);
    expect(harness.recorder.all().length).toBeGreaterThanOrEqual(2);
  });

  it("answers 413 on Content-Length alone, before the body arrives, and closes", async () => {
    const answer = await exchange([head("Content-Length: 10000000\r\n")]);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).toContain("connection: close");
  });

  it("answers 413 to a chunked body that grows past the cap", async () => {
    const chunk = "x".repeat(1000);
    const parts = [head("Transfer-Encoding: chunked\r\n"), ...Array.from({ length: 8 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`)];
    const answer = await exchange(parts, { pauseMs: 5 });
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
  });

  it("times out a body that never finishes (408), and a hang-up mid-body does not hurt the server", async () => {
    const slow = await exchange([head("Content-Length: 100\r\n"), "{"], { waitMs: 6000 });
    expect(slow).toMatch(/^HTTP\/1\.1 408/);
    await exchange([head("Content-Length: 100\r\n"), '{"eventType":'], { end: true, waitMs: 500 });
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
  });

  it("logs the client's address in the classic words", async () => {
    await exchange([head(`Content-Length: ${download.length}\r\n`), download]);
    expect(harness.capture.lines.map((line) => line.msg)).toContain(
      "Client '127.0.0.1' scan request for series: '/tv/Show/Season 01/Show - S01E01.mkv', event: 'Download'",
    );
  });
});

describe("a client that half-closes its socket after sending (printf … | nc -q0)", () => {
  // The real queue answers after an fsync: the FIN is read while the handler still waits. A sink that takes 50 ms.
  const slow = buildWebApp();
  const slowSink: ScanSink = async (requests) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return slow.recorder.sink(requests);
  };
  const app = buildWebApp({ sink: slowSink });
  let halfServer: WebServer;
  beforeAll(async () => {
    halfServer = await startWebServer({ app: app.app, hostname: "127.0.0.1", port: 0, requestTimeoutMs: 1500 });
  });
  afterAll(() => halfServer.close());

  /** Writes the whole request, shuts down the write side (FIN), then reads until the server closes. */
  function sendThenHalfClose(request: string): Promise<{ response: string; closedBy: "server" | "timeout" }> {
    return new Promise((resolve) => {
      const socket = connect({ port: halfServer.port, host: "127.0.0.1", allowHalfOpen: true });
      let response = "";
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ response, closedBy: "timeout" });
      }, 5000);
      socket.on("data", (chunk) => (response += chunk.toString("latin1")));
      socket.on("end", () => {
        clearTimeout(timer);
        socket.end();
        resolve({ response, closedBy: "server" });
      });
      socket.on("error", () => undefined);
      socket.end(request);
    });
  }

  it("still gets the whole answer to a webhook that takes a while to be stored, then the server closes", async () => {
    const before = slow.recorder.all().length;
    const { response, closedBy } = await sendThenHalfClose(head(`Content-Length: ${download.length}\r\n`) + download);
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response.endsWith("\r\n\r\nOK")).toBe(true);
    expect(closedBy).toBe("server");
    expect(slow.recorder.all().length).toBe(before + 1);
  });

  it("still gets the answer to a GET, and to a request the server rejects", async () => {
    const health = await sendThenHalfClose("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(health.response).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{"status":"ok"/);
    expect(health.closedBy).toBe("server");
    const tooBig = await sendThenHalfClose(head("Content-Length: 10000000\r\n"));
    expect(tooBig.response).toMatch(/^HTTP\/1\.1 413/);
    expect(tooBig.closedBy).toBe("server");
  });

  it("gets every answer to pipelined webhooks sent before the FIN, in order", async () => {
    const webhook = head(`Content-Length: ${download.length}\r\n`) + download;
    const { response, closedBy } = await sendThenHalfClose(webhook + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + webhook);
    expect(response.match(/HTTP\/1\.1 200 /g)).toHaveLength(3);
    expect(response.indexOf('{"status":"ok"')).toBeGreaterThan(response.indexOf("\r\n\r\nOK"));
    expect(closedBy).toBe("server");
  });

  it("a half-closed connection that sent nothing, or half a request, is closed (no socket left open)", async () => {
    expect(await sendThenHalfClose("")).toEqual({ response: "", closedBy: "server" });
    const partial = await sendThenHalfClose(head(`Content-Length: 100\r\n`) + '{"eventType":');
    expect(partial.closedBy).toBe("server");
  });
});
