/**
 * Google's partial-response `fields` selector (`nextPageToken,changes(fileId,file(id,name))`), applied the way the
 * real API does: keys not selected are dropped, so a client that forgets to ask for `parents` gets no `parents`.
 */
type Selection = Map<string, Selection | true>;

export function parseFields(fields: string): Selection {
  let pos = 0;
  function list(): Selection {
    const out: Selection = new Map();
    while (pos < fields.length && fields[pos] !== ")") {
      let name = "";
      while (pos < fields.length && !",()".includes(fields[pos] ?? "")) name += fields[pos++];
      const path = name.trim().split("/").filter(Boolean);
      let sub: Selection | true = true;
      if (fields[pos] === "(") {
        pos++;
        sub = list();
        pos++; // ")"
      }
      insert(out, path, sub);
      if (fields[pos] === ",") pos++;
    }
    return out;
  }
  return list();
}

function insert(into: Selection, path: readonly string[], leaf: Selection | true): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    into.set(head, leaf);
    return;
  }
  const existing = into.get(head);
  const child: Selection = existing instanceof Map ? existing : new Map();
  into.set(head, child);
  insert(child, rest, leaf);
}

export function applyFields(value: unknown, selection: Selection | true): unknown {
  if (selection === true || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => applyFields(item, selection));
  if (selection.has("*")) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of selection) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) out[key] = applyFields(field, sub);
  }
  return out;
}
