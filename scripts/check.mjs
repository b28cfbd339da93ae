#!/usr/bin/env node
// `npm run check`: the type check and ESLint from one TypeScript program. `npm run typecheck` and
// `npm run lint` each build the whole program of tsconfig.json (every .ts file of src, test, bench
// and chaos) and ask it for types; here tsc's diagnostics come first and ESLint's typed rules then
// read the same program's checker, whose types the check has already computed. The same errors and
// exit codes as the two scripts (prettier runs after this, in the npm script). docs/testing.md says
// what it saves.
import ts from 'typescript';
import { ESLint } from 'eslint';

const started = Date.now();
const host = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: ts.sys.getCurrentDirectory,
  getNewLine: () => ts.sys.newLine,
};
const report = (diagnostics) =>
  process.stdout.write(
    process.stdout.isTTY
      ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host)
      : ts.formatDiagnostics(diagnostics, host),
  );

const config = ts.getParsedCommandLineOfConfigFile(
  'tsconfig.json',
  { noEmit: true },
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      report([d]);
      process.exit(2);
    },
  },
);
if (config.errors.length > 0) {
  report(config.errors);
  process.exit(2);
}
const program = ts.createProgram({
  rootNames: config.fileNames,
  options: config.options,
  projectReferences: config.projectReferences,
});
const typeErrors = ts.getPreEmitDiagnostics(program);
report(typeErrors);
console.log(`[check] tsc: ${typeErrors.length} error(s) in ${((Date.now() - started) / 1000).toFixed(0)} s`);

const lintStarted = Date.now();
const eslint = new ESLint({
  // The typed rules read the program above instead of building their own from `project`.
  overrideConfig: { files: ['**/*.ts'], languageOptions: { parserOptions: { programs: [program] } } },
});
const results = await eslint.lintFiles(['.']);
const output = (await eslint.loadFormatter('stylish')).format(results);
if (output) process.stdout.write(output);
const lintErrors = results.reduce((n, r) => n + r.errorCount + r.fatalErrorCount, 0);
console.log(
  `[check] eslint: ${lintErrors} error(s) in ${results.length} files in ${((Date.now() - lintStarted) / 1000).toFixed(0)} s`,
);
process.exit(typeErrors.length > 0 || lintErrors > 0 ? 1 : 0);
