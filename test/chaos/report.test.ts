// chaos/report.ts: the JSON report's replay fields and what fails a run. A nondeterministic history
// or a stuck flow fails it like a doubled payment, with a line naming the workflow and the error.
import { failureReasons, printTable, replayLines, resultLine } from '../../chaos/report';
import type { RunReplay } from '../../chaos/replay';
import type { KindRow } from '../../chaos/check';

const clean = { doubled: 0, lost: 0, stuck: 0, nondeterministic: 0 };
const events = { lost: 0, tally: { idMismatches: 0, refused: 0 } };
const replay: RunReplay = {
  workflows: 3,
  byType: { mandateWorkflow: 3 },
  replayed: 3,
  nondeterministic: 1,
  histories: [
    {
      workflowId: 'mandate-X1abcmand7',
      runId: '0193-run',
      workflowType: 'mandateWorkflow',
      error: 'DeterminismViolationError: [TMPRL1100] Nondeterminism error: Update machine does not handle this event',
      file: '/tmp/run-nondeterministic/mandate-X1abcmand7-0193-run.json',
    },
  ],
  notDownloaded: [],
};

describe('the verdict', () => {
  it('passes a run with nothing doubled, lost, stuck or nondeterministic', () => {
    expect(failureReasons({ ...clean, events })).toEqual([]);
    expect(resultLine({ ...clean, events })).toBe(
      'RESULT: nothing doubled, nothing lost, nothing stuck, every history replayed',
    );
  });

  it('fails a run with one nondeterministic history, or one stuck flow, like a doubled payment', () => {
    expect(failureReasons({ ...clean, nondeterministic: 1 })).toEqual(['nondeterministic 1']);
    expect(failureReasons({ ...clean, stuck: 2 })).toEqual(['stuck 2']);
    expect(failureReasons({ ...clean, doubled: 1 })).toEqual(['doubled 1']);
    expect(resultLine({ ...clean, nondeterministic: 1, events: { ...events, lost: 1 } })).toBe(
      'RESULT: FAIL (nondeterministic 1, events lost 1)',
    );
  });
});

describe('replayLines', () => {
  it('gives the counts, then each nondeterministic history by workflow id with its error and file', () => {
    expect(replayLines(replay)).toEqual([
      "replay: 3 of 3 workflow histories replayed against the run's workflow code, 1 nondeterministic",
      'NONDETERMINISTIC mandate-X1abcmand7 (mandateWorkflow, run 0193-run): DeterminismViolationError: [TMPRL1100] Nondeterminism error: Update machine does not handle this event; saved to /tmp/run-nondeterministic/mandate-X1abcmand7-0193-run.json',
    ]);
  });

  it('names a history that could not be downloaded', () => {
    const lines = replayLines({
      ...replay,
      replayed: 2,
      notDownloaded: [{ workflowId: 'payment-X1', runId: 'r9', error: 'history: deadline passed' }],
    });
    expect(lines[0]).toBe(
      "replay: 2 of 3 workflow histories replayed against the run's workflow code, 1 nondeterministic",
    );
    expect(lines).toContain('NOT REPLAYED payment-X1 (run r9): history: deadline passed');
  });
});

describe('printTable', () => {
  it('has a stuck column and the nondeterministic count', () => {
    const row: KindRow = {
      flows: 2,
      succeeded: 1,
      failed: 0,
      unknown: 0,
      doubled: 0,
      lost: 0,
      stuck: 1,
      resolvedByRequery: 0,
      statuses: {},
    };
    const lines: string[] = [];
    printTable(
      {
        byKind: { mandate: row },
        flows: 2,
        kills: 0,
        serverRestarts: 0,
        ...clean,
        stuck: 1,
        nondeterministic: 1,
        unknown: 0,
        unknownResolvedByRequery: 0,
        durationMs: 1000,
      },
      (l) => lines.push(l),
    );
    expect(lines[0].split(/\s+/)).toEqual([
      'kind',
      'flows',
      'succeeded',
      'failed',
      'unknown',
      'doubled',
      'lost',
      'stuck',
      'resolved',
    ]);
    expect(lines[2].split(/\s+/)).toEqual(['mandate', '2', '1', '0', '0', '0', '0', '1', '0']);
    expect(lines.at(-1)).toContain('stuck 1');
    expect(lines.at(-1)).toContain('nondeterministic histories 1');
  });
});
