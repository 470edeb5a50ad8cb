/** scripts/build-if-stale.js: the one rule for "is the build current", used by `npm start` and the tests. */
export type PartName = 'relay' | 'console';
export const PARTS: Readonly<Record<PartName, { inputs: string[]; output: string }>>;
export const STAMP: string;
export function inputsDigest(root: string, inputs: readonly string[]): string;
/** The parts (of `names`, default all) whose output is missing or whose inputs changed since their last build. */
export function staleParts(root?: string, names?: readonly PartName[]): PartName[];
/** Builds `names` (unless `build` is false) and records their inputs as built. */
export function buildParts(root: string, names: readonly PartName[], build?: boolean): void;
export function buildIfStale(root?: string, opts?: { record?: boolean; log?: (s: string) => void }): PartName[];
