/** Three tiers (STYLE.md): unit beside the code, e2e and replay under test/. */
const swc = ['@swc/jest', { swcrc: true }];
const common = {
  transform: { '^.+\\.tsx?$': swc },
  moduleNameMapper: {
    '^@svc/events$': '<rootDir>/libs/events/src',
    '^@svc/domain$': '<rootDir>/libs/domain/src',
    // The console's deep imports of pure modules (apps/console/vite.config.mts).
    '^@svc/events/(.*)$': '<rootDir>/libs/events/src/$1',
  },
  testEnvironment: 'node',
};
module.exports = {
  // Suites run in worker processes (never in band), so one suite's stray handle can neither keep the run
  // open nor leak into another suite.
  maxWorkers: 2,
  // A loaded CI machine (two workers, chromium beside them) can stretch a real-socket test past Jest's 5 s
  // default without anything being wrong; waits inside tests carry their own, tighter limits.
  testTimeout: 20_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/relay/**/*.spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...common, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.spec.ts'] },
    // The console: its browser-side libraries, and the built app in headless chromium (npm run test:console).
    { ...common, displayName: 'console', testMatch: ['<rootDir>/test/console/**/*.spec.ts', '<rootDir>/test/console/**/*.browser-spec.ts'] },
  ],
};
