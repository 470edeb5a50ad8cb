const path = require('node:path');

/**
 * Prints the ten slowest test files (what to split first when the suite grows past its budget), then the
 * plain closing line CI reads ("jest: N passed, N failed"), after Jest's own summary.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.root = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .filter((r) => r.perfStats && r.perfStats.end > r.perfStats.start)
      .map((r) => ({ file: path.relative(this.root, r.testFilePath), s: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 10);
    if (files.length > 1) {
      process.stdout.write('\nslowest test files:\n');
      for (const f of files) process.stdout.write(`  ${f.s.toFixed(1).padStart(6)} s  ${f.file}\n`);
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
module.exports = SummaryReporter;
