/**
 * The Jest that StrykerJS runs (stryker.config.mjs): the domain's unit specs alone, as jest.config.js's unit
 * project runs them. Not a project of jest.config.js, so `npm test` never sees it.
 */
const { projects, testTimeout } = require('./jest.config.js');
const unit = projects.find((p) => p.displayName === 'unit');

module.exports = {
  transform: unit.transform,
  moduleNameMapper: unit.moduleNameMapper,
  testEnvironment: unit.testEnvironment,
  testTimeout,
  testMatch: ['<rootDir>/libs/domain/**/*.spec.ts'],
};
