/**
 * The one place that reads `process.env`. Everything else receives the environment (or values derived from it)
 * through options, so tests pass their own.
 */
export function readEnvironment(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
