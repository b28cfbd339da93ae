// Runs one command for `npm start` in a process group of its own, so a terminal's Ctrl-C reaches
// only `npm start`, which then stops the worker first and this command last (src/stack/start.ts).
//   node scripts/supervise.mjs <command> [args...]
// Stops the command (SIGTERM, SIGKILL after 10 s) on SIGTERM/SIGINT or when its standard input
// closes: the parent ended, however it ended (even SIGKILL), so nothing is left running.
// Exits with the command's exit code.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: supervise.mjs <command> [args...]');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
child.on('error', (err) => {
  console.error(`supervise: ${err.message}`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
