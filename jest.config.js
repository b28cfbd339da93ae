/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/jest-global-teardown.ts',
  testTimeout: 60_000,
  // Most test time is waiting on servers (Temporal, the sandbox, child processes), not CPU: 2.5 test
  // files per core keeps both cores busy (measured in docs/testing.md, "How long npm test takes").
  // A number: jest reads a percentage above 100% as that many workers.
  maxWorkers: Math.max(2, Math.floor(require('node:os').availableParallelism() * 2.5)),
  // Longest files first, on a fresh clone too (test/support/duration-sequencer.mjs).
  testSequencer: '<rootDir>/test/support/duration-sequencer.mjs',
  // Temporal's native runtime keeps handles open briefly after shutdown.
  forceExit: true,
};
