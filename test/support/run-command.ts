// A command run to its end without blocking the event loop (spawnSync blocks it), so that a suite
// can run independent commands side by side: what it printed and how it ended.
import { spawn } from 'node:child_process';

export interface CommandResult {
  /** The exit status; null when it could not start or was killed by a signal. */
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.once('error', (err) => resolve({ status: null, stdout, stderr: `${stderr}${err.message}` }));
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}
