/**
 * A strict parser of Prometheus's text exposition format 0.0.4 (what a Prometheus server reads from `/metrics`), for
 * tests: https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details. It refuses what Prometheus
 * would refuse (a malformed line, a sample of no declared family, a label set twice, a TYPE after its samples, a
 * histogram whose buckets are not cumulative or whose `+Inf` bucket differs from its `_count`).
 *
 * Why not a library: npm's one text-format parser (parse-prometheus-text-format 1.1.1) merges the series of a
 * labelled histogram into one and drops their `_count` and `_sum` (its issue #13, open since 2020; the fix, PR #8,
 * unmerged since 2019), and every histogram here has labels.
 */
export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  /** The sample's own name: `x_total`, `x_bucket`, `x_count` … */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  help: string;
  readonly samples: Sample[];
}

export type Families = ReadonlyMap<string, Family>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: [""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

export function parsePrometheusText(text: string): Families {
  const families = new Map<string, Family>();
  const sampled = new Set<string>();
  const seen = new Set<string>();
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("the exposition must end with a line feed");
  lines.forEach((line, index) => {
    const where = `line ${index + 1}: ${line}`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) return parseComment(line, families, sampled, where);
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (!family) throw new Error(`${where}: no TYPE declared for this sample`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: the same series twice`);
    seen.add(key);
    sampled.add(family.name);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

/** The sum of the values of `name`'s samples whose labels include `labels` (0 when there is none). */
export function sumOf(families: Families, name: string, labels: Readonly<Record<string, string>> = {}): number {
  const family = familyOf(families, name);
  if (!family) return 0;
  return family.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

export function familyOf(families: Families, sampleName: string): Family | undefined {
  for (const family of families.values()) {
    if (SUFFIXES[family.type].some((suffix) => family.name + suffix === sampleName)) return family;
  }
  return undefined;
}

function parseComment(line: string, families: Map<string, Family>, sampled: Set<string>, where: string): void {
  const match = /^#[ \t]+(HELP|TYPE)[ \t]+([^ \t]+)(?:[ \t]+(.*))?$/.exec(line);
  if (!match) return; // an ordinary comment
  const [, keyword, name = "", rest = ""] = match;
  if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)?.[0] !== name) throw new Error(`${where}: bad metric name`);
  if (keyword === "TYPE") {
    if (!TYPES.has(rest as MetricType)) throw new Error(`${where}: unknown type`);
    const existing = families.get(name);
    if (existing && (existing.samples.length > 0 || sampled.has(name))) throw new Error(`${where}: TYPE after samples`);
    if (existing && existing.type !== "untyped") throw new Error(`${where}: TYPE given twice`);
    families.set(name, { name, type: rest as MetricType, help: existing?.help ?? "", samples: [] });
  } else {
    const help = rest.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    const existing = families.get(name);
    if (existing) existing.help = help;
    else families.set(name, { name, type: "untyped", help, samples: [] });
  }
}

function parseSample(line: string, where: string): Sample {
  let rest = line;
  const name = METRIC_NAME.exec(rest)?.[0];
  if (!name) throw new Error(`${where}: bad metric name`);
  rest = rest.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    rest = rest.slice(1);
    while (!rest.startsWith("}")) {
      const label = LABEL_NAME.exec(rest)?.[0];
      if (!label) throw new Error(`${where}: bad label name`);
      if (label in labels) throw new Error(`${where}: label '${label}' twice`);
      rest = rest.slice(label.length);
      if (!rest.startsWith('="')) throw new Error(`${where}: expected =" after '${label}'`);
      rest = rest.slice(2);
      let value = "";
      for (;;) {
        const c = rest[0];
        if (c === undefined) throw new Error(`${where}: unterminated label value`);
        rest = rest.slice(1);
        if (c === '"') break;
        if (c === "\\") {
          const escaped = rest[0];
          rest = rest.slice(1);
          if (escaped === "n") value += "\n";
          else if (escaped === "\\" || escaped === '"') value += escaped;
          else throw new Error(`${where}: bad escape in a label value`);
        } else {
          value += c;
        }
      }
      labels[label] = value;
      if (rest.startsWith(",")) rest = rest.slice(1);
      else if (!rest.startsWith("}")) throw new Error(`${where}: expected , or } after a label`);
    }
    rest = rest.slice(1);
  }
  const fields = rest.trim().split(/[ \t]+/);
  if (!/^[ \t]/.test(rest) || fields.length < 1 || fields.length > 2) throw new Error(`${where}: expected a value and an optional timestamp`);
  const value = parseValue(fields[0] ?? "", where);
  if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`${where}: bad timestamp`);
  return { name, labels, value };
}

/** As Go's `strconv.ParseFloat` reads it (what Prometheus uses): `NaN`, `Inf`, `Infinity` in any case (prom-client
 *  writes `Nan` for an event-loop lag with no sample yet). */
function parseValue(text: string, where: string): number {
  const word = text.toLowerCase();
  if (/^\+?inf(inity)?$/.test(word)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/.test(word)) return Number.NEGATIVE_INFINITY;
  if (word === "nan") return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: bad value '${text}'`);
  return Number(text);
}

/** Per series (labels without `le`): buckets cumulative, `+Inf` present and equal to `_count`, `_sum` present. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without 'le'`);
      entry.buckets.push([parseValue(le, family.name), sample.value]);
    } else if (sample.name.endsWith("_count")) entry.count = sample.value;
    else entry.sum = sample.value;
  }
  for (const [key, entry] of series) {
    const sorted = [...entry.buckets].sort((a, b) => a[0] - b[0]);
    sorted.forEach(([, count], i) => {
      if (i > 0 && count < (sorted[i - 1]?.[1] ?? 0)) throw new Error(`${family.name}${key}: buckets are not cumulative`);
    });
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY) throw new Error(`${family.name}${key}: no +Inf bucket`);
    if (entry.count !== inf[1]) throw new Error(`${family.name}${key}: _count differs from the +Inf bucket`);
    if (entry.sum === undefined) throw new Error(`${family.name}${key}: no _sum`);
  }
}
