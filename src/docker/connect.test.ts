import { describe, expect, it } from "vitest";
import { describeEndpoint, parseDockerHost } from "./connect.ts";

describe("parseDockerHost", () => {
  it.each([
    [undefined, { kind: "default" }],
    ["", { kind: "default" }],
    ["unix://", { kind: "default" }],
    ["unix:///var/run/docker.sock", { kind: "socket", socketPath: "/var/run/docker.sock" }],
    ["/run/user/1000/docker.sock", { kind: "socket", socketPath: "/run/user/1000/docker.sock" }],
    ["tcp://docker-proxy:2375", { kind: "tcp", host: "docker-proxy", port: 2375, protocol: "http" }],
    ["tcp://10.0.0.5:2376", { kind: "tcp", host: "10.0.0.5", port: 2376, protocol: "https" }],
    ["socket-proxy:2375", { kind: "tcp", host: "socket-proxy", port: 2375, protocol: "http" }],
    ["ssh://me@nas", { kind: "ssh", host: "nas", username: "me" }],
  ])("%s", (value, expected) => {
    expect(parseDockerHost(value)).toEqual(expected);
  });

  it("says which forms it takes when it cannot read the value", () => {
    expect(() => parseDockerHost("ftp://x")).toThrow(/unsupported scheme; expected unix:\/\/, tcp:\/\/ or ssh:\/\//);
  });

  it("describes the endpoint for messages", () => {
    expect(describeEndpoint(parseDockerHost(undefined))).toBe("/var/run/docker.sock");
    expect(describeEndpoint(parseDockerHost("tcp://proxy:2375"))).toBe("tcp://proxy:2375");
  });
});
