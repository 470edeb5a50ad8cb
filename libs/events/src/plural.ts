/**
 * A count with its noun: `1 segment`, `3 segments`, `1 reply`, `2 replies` (`many` when the plural is not
 * the noun plus "s"). Pure, so the CLI and the console (by `@svc/events/plural`) say counts the same way.
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
