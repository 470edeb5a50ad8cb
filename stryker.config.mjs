// @ts-check
/** The files a run mutates (`--mutate a.ts,b.ts`) as a name, for their own incremental file. */
const selection = (() => {
  const i = process.argv.findIndex((a) => a === '--mutate' || a === '-m');
  if (i < 0 || !process.argv[i + 1]) return 'all';
  return process.argv[i + 1]
    .replace(/libs\/domain\/src\//g, '')
    .replace(/[^A-Za-z0-9.]+/g, '_')
    .slice(0, 120);
})();

/**
 * Mutation testing of the pure domain rules: `npm run test:mutation` (not part of `npm test`: it is CPU-heavy).
 * Name the files you changed, or it mutates all of libs/domain:
 *   npm run test:mutation -- --mutate libs/domain/src/sessions/sessions.ts
 * Incremental: a run retests only the mutants whose code or covering tests changed since the last run of the
 * same selection on this machine (reports/incremental/<selection>.json, gitignored: one file per selection, so
 * a run on one file keeps another's results); `--force` retests everything. docs/TESTING.md has the scores.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  mutate: ['libs/domain/src/**/*.ts', '!libs/domain/src/**/*.spec.ts', '!libs/domain/src/index.ts'],
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
  // A mutant that does not type-check is not a test's business (the compiler kills it); the checker says so
  // without running the tests.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: `reports/incremental/${selection}.json`,
  // Static mutants (module-level constants such as the default blocklist) need a fresh module registry and
  // every test for each one; they are left out (reported as ignored) to keep a run in minutes.
  ignoreStatic: true,
  // A shared 2-core machine: one test runner (and one checker), and room for a slow run on a loaded machine
  // before a mutant counts as an endless loop (a false timeout counts as killed).
  concurrency: 1,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  thresholds: { high: 90, low: 80, break: null },
  // What the domain's specs need in the sandbox; the rest of the repository is not copied.
  ignorePatterns: ['/apps', '/bench', '/bin', '/docs', '/scripts', '/dist', '/test-results', '/coverage', '/test/*', '!/test/support'],
};
