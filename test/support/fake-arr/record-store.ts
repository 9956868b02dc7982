/**
 * The history table as the app's database holds it: rows in id order, the series/movie/artist/author each row
 * belongs to (found from a path's first folder under the root), and the orders a query reads them in: one sort
 * column and no tie-breaker, so rows that tie come in a scrambled but stable order (§2), the date order cached until
 * the table changes. A row: PascalCase `Data` keys, sub-second dates (100 ns ticks).
 */
export interface Row {
  readonly id: number;
  readonly ms: number;
  /** 0–9999: the 100 ns ticks within the millisecond (.NET keeps 7 digits). */
  readonly ticks: number;
  readonly eventType: number;
  readonly itemId: number;
  readonly subId: number;
  readonly sourceTitle: string;
  readonly downloadId: string | undefined;
  /** PascalCase keys, as stored. */
  readonly data: Readonly<Record<string, string | undefined>>;
}

export interface Item {
  readonly id: number;
  readonly folder: string;
  readonly title: string;
}

export interface RecordStore {
  /** Every row in id order (the table itself: change it only through the store). */
  readonly rows: readonly Row[];
  /** A path relative to the root made absolute; an absolute one (POSIX, Windows or UNC) as it is. */
  absolute(path: string): string;
  /** The series/movie/artist/author a path belongs to: the first folder under the root (else the file's folder). */
  itemOf(path: string): Item;
  itemById(id: number): Item | undefined;
  /** Appends a row with the next id; returns it. */
  push(row: Omit<Row, "id">): number;
  /** The id the next row gets. */
  nextId(): number;
  /** The last row's id, 0 when empty. */
  lastId(): number;
  /** Drops every row of the item whose folder holds `path`; returns how many. */
  deleteItem(path: string): number;
  /** The date column's order, with no tie-breaker: rows of the same instant in a stable but scrambled order. */
  byDate(direction: 1 | -1): readonly Row[];
  /** The order of a sort column the app accepts (`date`, `id`, a title, a quality …). */
  ordered(sortKey: string, direction: 1 | -1): readonly Row[];
}

export function createRecordStore(root: string): RecordStore {
  const rows: Row[] = [];
  const items = new Map<string, Item>();
  const itemsById = new Map<number, Item>();
  let sorted: { key: string; rows: Row[] } | undefined;

  function absolute(path: string): string {
    return path.startsWith("/") || /^[A-Za-z]:[\\/]|^\\\\/.test(path) ? path : `${root}/${path}`;
  }

  function itemOf(path: string): Item {
    const folder = path.startsWith(`${root}/`) ? `${root}/${path.slice(root.length + 1).split("/")[0]}` : dirname(path);
    let item = items.get(folder);
    if (!item) {
      item = { id: items.size + 1, folder, title: folder.slice(folder.lastIndexOf("/") + 1) };
      items.set(folder, item);
      itemsById.set(item.id, item);
    }
    return item;
  }

  function itemById(id: number): Item | undefined {
    return itemsById.get(id);
  }

  function nextId(): number {
    return rows.length === 0 ? 1 : (rows[rows.length - 1]?.id ?? 0) + 1;
  }

  function push(row: Omit<Row, "id">): number {
    const id = nextId();
    rows.push({ ...row, id });
    sorted = undefined;
    return id;
  }

  function byDate(direction: 1 | -1): Row[] {
    const key = `date:${direction}`;
    if (sorted?.key === key) return sorted.rows;
    const out = rows.slice().sort((a, b) => direction * (a.ms - b.ms || a.ticks - b.ticks || scramble(a.id) - scramble(b.id)));
    sorted = { key, rows: out };
    return out;
  }

  function ordered(sortKey: string, direction: 1 | -1): Row[] {
    if (sortKey === "date") return byDate(direction);
    if (sortKey === "id") return direction === 1 ? rows : rows.slice().reverse();
    // A title or a quality: every fake row shares the quality and language, so those keys tie throughout.
    const title = (row: Row): string => (sortKey.endsWith("sortTitle") ? itemById(row.itemId)?.title.toLowerCase() ?? "" : "");
    return rows.slice().sort((a, b) => direction * (title(a).localeCompare(title(b)) || scramble(a.id) - scramble(b.id)));
  }

  return {
    rows,
    absolute,
    itemOf,
    itemById,
    push,
    nextId,
    lastId: () => (rows.length === 0 ? 0 : (rows[rows.length - 1]?.id ?? 0)),
    deleteItem(path) {
      const item = itemOf(absolute(path));
      const before = rows.length;
      const kept = rows.filter((row) => row.itemId !== item.id);
      rows.length = 0;
      rows.push(...kept);
      sorted = undefined;
      return before - rows.length;
    },
    byDate,
    ordered,
  };
}

/** A stable, well-mixed number per id: the order of rows that tie on the sort column. */
function scramble(id: number): number {
  let x = Math.imul(id ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

function dirname(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}
