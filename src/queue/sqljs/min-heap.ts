/** A binary min-heap: push and pop in O(log n). */
export interface MinHeap<T> {
  push(value: T): void;
  pop(): T | undefined;
  peek(): T | undefined;
  readonly size: number;
  /** Keeps only the values `keep` accepts (a rebuild in O(n)). */
  retain(keep: (value: T) => boolean): void;
}

export function createMinHeap<T>(less: (a: T, b: T) => boolean): MinHeap<T> {
  let items: T[] = [];
  const swap = (i: number, j: number): void => {
    const t = items[i] as T;
    items[i] = items[j] as T;
    items[j] = t;
  };
  const up = (start: number): void => {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(items[i] as T, items[parent] as T)) return;
      swap(i, parent);
      i = parent;
    }
  };
  const down = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && less(items[left] as T, items[least] as T)) least = left;
      if (right < items.length && less(items[right] as T, items[least] as T)) least = right;
      if (least === i) return;
      swap(i, least);
      i = least;
    }
  };
  return {
    push(value) {
      items.push(value);
      up(items.length - 1);
    },
    pop() {
      const top = items[0];
      const last = items.pop();
      if (items.length > 0 && last !== undefined) {
        items[0] = last;
        down(0);
      }
      return top;
    },
    peek: () => items[0],
    get size() {
      return items.length;
    },
    retain(keep) {
      items = items.filter(keep);
      for (let i = (items.length >> 1) - 1; i >= 0; i--) down(i);
    },
  };
}
