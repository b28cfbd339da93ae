#!/usr/bin/env node
// `npm run cli -- <command>` (installed as a package: the `payflow` bin, dist/starters/cli.js): start payment flows and follow them until a final state.
// Each flow registers its commands from src/starters/commands/<flow>.ts. What they print and how they
// exit is decided in one place, ./commands/output.ts (exit codes: docs/cli.md); one run of it is
// runCli (./commands/index.ts), here on the process's own streams and environment (.env included).
import './compile-cache';
import 'dotenv/config';
import { runCli } from './commands';
import { processIo } from './commands/context';

void runCli(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
