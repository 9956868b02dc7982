import { readFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

/**
 * deploy/unraid/autoscan.xml against the image and the compose files: the Unraid template runs the same container as
 * docker-compose.yml (+ the scanner override), so every port, path and variable either has lost a place in both or is
 * in both, with the same container side and mode. Read as dockerMan reads it (unraid/webgui, dynamix.docker.manager
 * Helpers.php: xmlToVar, xmlToCommand): a `Path` becomes `-v host:target:mode` (skipped while the host side is empty),
 * a `Port` `-p host:target/mode` in bridge, a `Variable` `-e target=value` (always, even empty); dockerMan adds TZ
 * itself (the host's time zone), and stores the icon as `<name>-icon.png`.
 */
const ROOT = join(import.meta.dirname, "..");
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

interface TemplateConfig {
  readonly Name: string;
  readonly Target: string;
  readonly Default: string;
  readonly Mode: string;
  readonly Description: string;
  readonly Type: string;
  readonly Display: string;
  readonly Required: string;
  readonly Mask: string;
  readonly "#text"?: string;
}
type Template = Readonly<Record<string, string>> & { readonly Config: readonly TemplateConfig[] };

/** The image as the Dockerfile's last stage builds it: ENV (with continuation lines), VOLUME, EXPOSE, HEALTHCHECK. */
interface Image {
  readonly env: ReadonlyMap<string, string>;
  readonly volumes: readonly string[];
  readonly ports: readonly string[];
  readonly healthcheck: boolean;
}

/** One compose service's container side: environment (name → value as written), ports and volumes. */
interface Service {
  readonly environment: Readonly<Record<string, string>>;
  readonly ports: readonly { readonly container: string; readonly protocol: string }[];
  readonly volumes: readonly { readonly target: string; readonly mode: string }[];
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", parseAttributeValue: false, parseTagValue: false, isArray: (name) => name === "Config" });

function loadTemplate(text: string): { version: string; template: Template } {
  const root = (xml.parse(text) as { Container?: Template & { version?: string } }).Container;
  if (!root) throw new Error("no <Container> root");
  return { version: root.version ?? "", template: root };
}

function loadImage(dockerfile: string): Image {
  const lines = dockerfile.replace(/\\\n/g, " ").split("\n");
  const last = lines.findLastIndex((line) => /^FROM\s/.test(line));
  const stage = lines.slice(last).map((line) => line.trim());
  const env = new Map<string, string>();
  const volumes: string[] = [];
  const ports: string[] = [];
  for (const line of stage) {
    const [instruction = "", ...rest] = line.split(/\s+/);
    if (instruction === "ENV") for (const pair of rest) env.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    if (instruction === "VOLUME") volumes.push(...rest);
    if (instruction === "EXPOSE") ports.push(...rest.map((port) => port.replace(/\/tcp$/, "")));
  }
  return { env, volumes, ports, healthcheck: stage.some((line) => /^HEALTHCHECK\s+(?!NONE)/.test(line)) };
}

/** `${NAME:-default}` → default, as Compose renders it with no .env. */
const composeDefault = (value: string): string => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1");

function loadService(text: string): Service {
  const service = (parseYaml(text) as { services: Record<string, { environment?: Record<string, string>; ports?: string[]; volumes?: string[] }> }).services.autoscan;
  if (!service) throw new Error("no autoscan service");
  return {
    environment: service.environment ?? {},
    ports: (service.ports ?? []).map((spec) => {
      const [published = "", protocol = "tcp"] = composeDefault(spec).split("/");
      return { container: published.split(":").at(-1) ?? "", protocol };
    }),
    volumes: (service.volumes ?? []).map((spec) => {
      const [, target = "", mode = "rw"] = composeDefault(spec).split(":");
      return { target, mode };
    }),
  };
}

/** The variables docker/entrypoint.sh reads before autoscan starts (`${PUID:-1000}`). */
function entrypointVariables(script: string): string[] {
  return [...new Set([...script.matchAll(/^\s*([A-Z][A-Z_]*)=\$\{\1:-/gm)].map(([, name = ""]) => name))];
}

const ofType = (template: Template, type: string): TemplateConfig[] => template.Config.filter((config) => config.Type === type);

/**
 * What differs between the template and the image + compose files, one line each (empty: none). A compose variable may
 * be missing from the template only when the image already sets it to the same value, or dockerMan sets it (TZ); the
 * template may hold only what the image, its entrypoint or the compose files know.
 */
function drift(template: Template, image: Image, services: readonly Service[], entrypoint: readonly string[]): string[] {
  const problems: string[] = [];
  const variables = new Map(ofType(template, "Variable").map((config) => [config.Target, config]));
  const paths = new Map(ofType(template, "Path").map((config) => [config.Target, config]));
  const ports = new Map(ofType(template, "Port").map((config) => [config.Target, config]));
  const setByDockerMan = new Set(["TZ"]);

  for (const service of services) {
    for (const [name, value] of Object.entries(service.environment)) {
      const pinned = image.env.get(name) === composeDefault(String(value));
      if (!variables.has(name) && !pinned && !setByDockerMan.has(name)) problems.push(`compose sets ${name}; the template has no variable for it`);
      if (variables.has(name) && image.env.has(name) && image.env.get(name) !== composeDefault(String(value))) {
        problems.push(`${name}: the image sets it, compose changes it, and the template leaves it to the user`);
      }
    }
    for (const { target, mode } of service.volumes) {
      const config = paths.get(target);
      if (!config) problems.push(`compose mounts ${target}; the template has no path for it`);
      else if (config.Mode !== mode) problems.push(`${target}: compose mounts it ${mode}, the template ${config.Mode}`);
    }
    for (const { container, protocol } of service.ports) {
      const config = ports.get(container);
      if (!config) problems.push(`compose publishes ${container}; the template has no port for it`);
      else if (config.Mode !== protocol) problems.push(`${container}: compose publishes ${protocol}, the template ${config.Mode}`);
    }
  }
  for (const volume of image.volumes) if (!paths.has(volume)) problems.push(`the image declares VOLUME ${volume}; the template has no path for it`);
  for (const port of image.ports) if (!ports.has(port)) problems.push(`the image EXPOSEs ${port}; the template has no port for it`);
  if (image.env.get("SERVER_PORT") !== undefined && !ports.has(image.env.get("SERVER_PORT") ?? "")) {
    problems.push(`the image listens on SERVER_PORT ${image.env.get("SERVER_PORT") ?? ""}; the template publishes ${[...ports.keys()].join(", ")}`);
  }

  const composeVariables = new Set(services.flatMap((service) => Object.keys(service.environment)));
  for (const name of variables.keys()) {
    if (!composeVariables.has(name) && !entrypoint.includes(name)) problems.push(`the template sets ${name}, which neither compose file nor the entrypoint sets`);
    if (image.env.has(name) && !composeVariables.has(name)) problems.push(`the template lets the user change ${name}, which the image pins to ${image.env.get(name) ?? ""}`);
  }
  const composePaths = new Set([...services.flatMap((service) => service.volumes.map((volume) => volume.target)), ...image.volumes]);
  for (const target of paths.keys()) if (!composePaths.has(target)) problems.push(`the template mounts ${target}, which the compose files do not`);
  const composePorts = new Set([...services.flatMap((service) => service.ports.map((port) => port.container)), ...image.ports]);
  for (const target of ports.keys()) if (!composePorts.has(target)) problems.push(`the template publishes ${target}, which the image does not listen on`);
  for (const name of entrypoint) if (!variables.has(name)) problems.push(`the entrypoint reads ${name}; the template has no variable for it`);
  return problems;
}

const { version, template } = loadTemplate(read("deploy/unraid/autoscan.xml"));
const image = loadImage(read("Dockerfile"));
const compose = loadService(read("docker-compose.yml"));
const scanner = loadService(read("docker-compose.scanner.yml"));
const entrypoint = entrypointVariables(read("docker/entrypoint.sh"));
const config = (target: string): TemplateConfig => {
  const found = template.Config.find((entry) => entry.Target === target);
  if (!found) throw new Error(`no Config for ${target}`);
  return found;
};

describe("the Unraid template (deploy/unraid/autoscan.xml)", () => {
  it("has every port, path and variable of the image and the compose files, with the same container side and mode, and nothing else", () => {
    expect(entrypoint).toEqual(["PUID", "PGID"]);
    expect(drift(template, image, [compose, scanner], entrypoint)).toEqual([]);
  });

  it("says what drifted when the compose file or the image moves on without it", () => {
    const moved: Service = {
      environment: { ...compose.environment, AUTOSCAN_NEW: "1" },
      ports: [{ container: "3468", protocol: "tcp" }],
      volumes: [...compose.volumes.filter((volume) => volume.target !== "/data"), { target: "/data", mode: "rw" }],
    };
    const rebuilt: Image = { ...image, volumes: [...image.volumes, "/cache"], env: new Map([...image.env, ["SERVER_PORT", "3468"]]) };
    expect(drift(template, rebuilt, [moved], entrypoint)).toEqual([
      "compose sets AUTOSCAN_NEW; the template has no variable for it",
      "/data: compose mounts it rw, the template ro",
      "compose publishes 3468; the template has no port for it",
      "the image declares VOLUME /cache; the template has no path for it",
      "the image listens on SERVER_PORT 3468; the template publishes 3467",
      "the template sets PLEX_SCAN_METHOD, which neither compose file nor the entrypoint sets",
      "the template sets USE_DOCKER, which neither compose file nor the entrypoint sets",
      "the template sets DOCKER_NAME, which neither compose file nor the entrypoint sets",
      "the template mounts /var/run/docker.sock, which the compose files do not",
    ]);
  });

  it("runs the compose file's image as the container of that name, and leaves the image's entrypoint, user and health check alone", () => {
    expect(version).toBe("2");
    const composeFile = parseYaml(read("docker-compose.yml")) as { services: { autoscan: { image: string; container_name: string } } };
    expect(template.Repository).toBe(composeDefault(composeFile.services.autoscan.image));
    // autoscan's own messages say `docker exec autoscan …`.
    expect(template.Name).toBe(composeFile.services.autoscan.container_name);
    expect(template.Network).toBe("bridge");
    expect(image.healthcheck).toBe(true);
    expect(template.ExtraParams ?? "").not.toMatch(/--(no-healthcheck|health-|user|entrypoint|restart)/);
    expect(template.PostArgs ?? "").toBe("");
    expect(template.Privileged).toBe("false");
  });

  it("lists each entry as dockerMan accepts it: a known type, mode and display, a description, a default where one is required", () => {
    const pathModes = ["rw", "ro", "rw,slave", "rw,shared", "ro,slave", "ro,shared"];
    for (const entry of template.Config) {
      expect(["Port", "Path", "Variable", "Label", "Device"], entry.Name).toContain(entry.Type);
      expect(["always", "advanced", "always-hide", "advanced-hide"], entry.Name).toContain(entry.Display);
      expect(["true", "false"], entry.Name).toContain(entry.Required);
      expect(entry.Mask, entry.Name).toBe("false");
      expect(entry.Description.length, entry.Name).toBeGreaterThan(20);
      if (entry.Type === "Path") expect(pathModes, entry.Name).toContain(entry.Mode);
      if (entry.Type === "Port") expect(["tcp", "udp"], entry.Name).toContain(entry.Mode);
      if (entry.Required === "true") expect(entry.Default, entry.Name).not.toBe("");
      // The first choice of a dropdown is its default; the value shown must be one of them.
      if (entry.Default.includes("|")) expect(entry.Default.split("|"), entry.Name).toContain(entry["#text"]);
    }
    // Unraid's conventions: appdata for the config, the array for media, nobody:users.
    expect(config("/config").Default).toBe("/mnt/user/appdata/autoscan");
    expect(config("/data").Default).toMatch(/^\/mnt\//);
    expect([config("PUID").Default, config("PGID").Default]).toEqual(["99", "100"]);
    // The socket is opt-in: dockerMan skips a path whose host side is empty.
    expect(config("/var/run/docker.sock")).toMatchObject({ Default: "", Required: "false", Display: "advanced" });
    // An empty variable is ignored by autoscan (config.json decides): a default would override a moved-over config.
    for (const name of ["PLEX_LOCAL_URL", "AUTOSCAN_LOGLEVEL", "PLEX_SCAN_METHOD", "USE_DOCKER", "DOCKER_NAME"]) expect(config(name).Default, name).toBe("");
  });

  it("has what Community Applications needs to list it, pointing at this repository's files", () => {
    for (const field of ["Name", "Repository", "Category", "Icon", "Overview", "Project", "Support", "TemplateURL"]) {
      expect(template[field] ?? "", field).not.toBe("");
    }
    const raw = "https://raw.githubusercontent.com/autoscan/autoscan/main/";
    expect(template.TemplateURL).toBe(`${raw}deploy/unraid/autoscan.xml`);
    expect(template.Icon?.startsWith(raw)).toBe(true);
    // dockerMan saves the icon as <name>-icon.png and serves it as a PNG: an SVG would not show.
    const icon = readFileSync(join(ROOT, (template.Icon ?? "").slice(raw.length)));
    expect([...icon.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(template.Project).toBe("https://github.com/autoscan/autoscan");

    const profile = (xml.parse(read("deploy/unraid/ca_profile.xml")) as { CommunityApplications?: Record<string, string> }).CommunityApplications;
    expect(profile?.Profile?.trim()).not.toBe("");
    expect(profile?.Icon).toBe(template.Icon);
    expect(profile?.WebPage).toBe(template.Project);
  });
});
