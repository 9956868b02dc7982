/**
 * The short key a request's path is indexed by (`requests (item_id, path_key)`): 32-bit FNV-1a over the path's UTF-16
 * code units, as a signed integer so SQLite stores it in at most 4 bytes. Indexing the whole path repeated every path
 * in the index: a quarter of the queue file with 100,000 requests waiting. Keys of different paths may collide; a
 * lookup compares the path too. Stored in the queue file: never change the function.
 */
export function pathKey(path: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) hash = Math.imul(hash ^ path.charCodeAt(i), 0x01000193);
  return hash | 0;
}
