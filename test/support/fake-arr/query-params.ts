/**
 * Query parameters as the apps read them: names without regard to case, a repeatable one's every value, an int.
 */
export function getCi(query: URLSearchParams, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of query) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

export function allCi(query: URLSearchParams, name: string): string[] {
  const wanted = name.toLowerCase();
  return [...query].filter(([key]) => key.toLowerCase() === wanted).map(([, value]) => value);
}

export function intParam(query: URLSearchParams, name: string): number | undefined {
  const value = getCi(query, name);
  return value !== undefined && /^-?\d+$/.test(value) ? Number(value) : undefined;
}
