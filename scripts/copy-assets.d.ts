/** scripts/copy-assets.js: copies the run-time assets under apps/relay/src into dist/; returns their relative paths. */
export function copyAssets(root?: string): string[];
/** Which files are such assets. */
export const ASSET: RegExp;
