// The exit code of a command that failed (docs/cli.md, "Exit codes"), for the errors that do not
// come from our own code: commander's, and the Temporal client's (whose `code` is a gRPC number).
import { QueryNotRegisteredError } from '@temporalio/client';
import { isCommanderError, outcomeOfError } from '../../src/starters/commands/output';

describe('a failed command: its outcome', () => {
  it("commander's own errors (a 'commander.*' code) are bad input", () => {
    const err = Object.assign(new Error("error: unknown option '--x'"), {
      code: 'commander.unknownOption',
      exitCode: 1,
    });
    expect(isCommanderError(err)).toBe(true);
    expect(outcomeOfError(err)).toBe('badInput');
  });

  it('an error whose code is a number is not taken for commander\'s (the CLI once crashed on it: "code?.startsWith is not a function", exit 1)', () => {
    // What the client throws when the worker could not answer a query, e.g. a history that did not replay.
    const err = new QueryNotRegisteredError('[TMPRL1100] Nondeterminism error: …', 3);
    expect(isCommanderError(err)).toBe(false);
    expect(isCommanderError({ code: 14 })).toBe(false);
    expect(isCommanderError(undefined)).toBe(false);
    // A state that could not be read is not a declined payment (1): it needs a person (3).
    expect(outcomeOfError(err)).toBe('needsPerson');
  });

  it('a gRPC UNAVAILABLE or DEADLINE_EXCEEDED is "cannot reach Temporal"', () => {
    expect(outcomeOfError(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }))).toBe(
      'unreachable',
    );
    expect(outcomeOfError(Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4 }))).toBe('unreachable');
  });
});
