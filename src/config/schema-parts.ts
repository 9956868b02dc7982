import * as v from "valibot";

/**
 * Small schema builders shared by the config sections. Every key is optional in the file and gets the default
 * plex_autoscan gave it; types are checked strictly, with messages that say what was expected.
 */
export const str = (fallback: string) => v.optional(v.string("expected a string"), fallback);

export const bool = (fallback: boolean) => v.optional(v.boolean("expected true or false (no quotes)"), fallback);

export const int = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.optional(
    v.pipe(
      v.number("expected a whole number (no quotes)"),
      v.integer("expected a whole number"),
      v.minValue(min, `expected a number of at least ${min}`),
      v.maxValue(max, `expected a number of at most ${max}`),
    ),
    fallback,
  );

export const num = (fallback: number, min: number) =>
  v.optional(
    v.pipe(v.number("expected a number (no quotes)"), v.minValue(min, `expected a number of at least ${min}`)),
    fallback,
  );

export const strList = (fallback: string[] = []) =>
  v.optional(v.array(v.string("expected a string"), "expected a list of strings, e.g. [\"a\", \"b\"]"), fallback);

/** `{"/server/side/": ["/other/form/", "My Drive/form/"]}` */
export const pathMap = () =>
  v.optional(
    v.record(
      v.pipe(v.string(), v.minLength(1, "expected a non-empty path as the key")),
      v.array(
        v.pipe(v.string("expected a path string"), v.minLength(1, "expected a non-empty path")),
        'expected a list of paths, e.g. {"/data/Movies/": ["/mnt/unionfs/Movies/"]}',
      ),
      'expected an object of path → list of paths, e.g. {"/data/Movies/": ["/mnt/unionfs/Movies/"]}',
    ),
    {},
  );

export const oneOf = <const T extends string>(values: readonly T[], fallback: T) =>
  v.optional(
    v.pipe(
      v.string(`expected one of ${values.map((x) => `"${x}"`).join(", ")}`),
      v.transform((s) => s.toLowerCase()),
      v.picklist(values, `expected one of ${values.map((x) => `"${x}"`).join(", ")}`),
    ),
    fallback,
  );

export const url = (fallback: string) =>
  v.optional(
    v.pipe(
      v.string("expected a URL string"),
      v.url("expected a URL such as http://localhost:32400"),
      v.regex(/^https?:\/\//i, "expected an http:// or https:// URL, such as http://localhost:32400"),
    ),
    fallback,
  );
