import { describe, expect, it } from "vitest";
import { describeContainerPort, filePortOf, IMAGE_PORT } from "./container-port.ts";

describe("describeContainerPort: where autoscan listens in its container, and what a moved-over SERVER_PORT means", () => {
  const environment = { kind: "environment", variable: "SERVER_PORT" } as const;

  it("config.json's 3468 under the image's 3467: a problem, fixed on the host side with AUTOSCAN_PORT=3468", () => {
    const finding = describeContainerPort({ listenPort: IMAGE_PORT, source: environment, filePort: 3468 });
    expect(finding.problem).toBe(true);
    expect(finding.detail).toBe(
      "config.json says SERVER_PORT 3468; in this container autoscan listens on 3467 (the image sets SERVER_PORT, which wins), " +
        "and your apps reach it at the host port Docker publishes, AUTOSCAN_PORT in .env (3467 unless set).",
    );
    expect(finding.fix).toContain("set AUTOSCAN_PORT=3468 in .env and run 'docker compose up -d'; then delete SERVER_PORT from config.json");
    expect(finding.fix).toContain("http://autoscan:3467/");
  });

  it.each([
    ["config.json holds no SERVER_PORT", undefined],
    ["config.json holds the image's own port", IMAGE_PORT],
  ])("%s: nothing to do, and where the host's port is set", (_, filePort) => {
    const finding = describeContainerPort({ listenPort: IMAGE_PORT, source: environment, filePort });
    expect(finding).toEqual({
      problem: false,
      detail: "autoscan listens on 3467 in this container (the image's port); Docker publishes it on the host at AUTOSCAN_PORT in .env (3467 unless set).",
    });
  });

  it("SERVER_PORT moved in the container's environment: said (right with host networking), not a problem", () => {
    const finding = describeContainerPort({ listenPort: 3470, source: environment, filePort: 3468 });
    expect(finding.problem).toBe(false);
    expect(finding.detail).toContain("autoscan listens on 3470 in this container (SERVER_PORT=3470 in the container's environment), not on the image's 3467");
    expect(finding.detail).toContain("right with network_mode: host");
  });

  it("an image without the port in its environment (an older one): config.json's SERVER_PORT is named as the cause", () => {
    const finding = describeContainerPort({ listenPort: 3468, source: { kind: "config.json", path: "/config/config.json" }, filePort: 3468 });
    expect(finding.detail).toContain("(config.json's SERVER_PORT), not on the image's 3467");
  });
});

describe("filePortOf: SERVER_PORT as config.json writes it", () => {
  it.each([
    ['{"SERVER_PORT": 3468}', 3468],
    ['\uFEFF{"SERVER_PORT": 3468}', 3468],
    ['{"SERVER_PORT": "3468"}', undefined],
    ['{"SERVER_PORT": 34.5}', undefined],
    ["{}", undefined],
    ["null", undefined],
    ["{ not json", undefined],
    ["", undefined],
  ])("%j → %s", (text, port) => {
    expect(filePortOf(text)).toBe(port);
  });
});
