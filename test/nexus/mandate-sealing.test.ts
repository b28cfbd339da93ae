// A mandate's parse-and-seal has one home (sealMandateRequest, src/starters/mandate.ts): the starter
// starts the flow with it and the Nexus helper hands it to `mandateCreate`. Both check the request
// the same way, seal the BVN in the caller's process and give the flow a handle, never the digits.
// No Temporal or database here: a claim-check store that records what it seals and a client that
// records what it starts.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { sealMandateForNexus } from '../../src/nexus/sealing';
import type { MandateInput } from '../../src/shared/mandate';
import type { StarterContext } from '../../src/starters/connect';
import { startMandate } from '../../src/starters/mandate';
import { newMandateRequest } from '../support/flow-inputs';

const BVN = '22212345678';

/** A claim-check store that keeps what it seals (by handle) and what it discards. */
function fakeClaimCheck() {
  const sealed = new Map<string, { purpose: string; value: unknown }>();
  const discarded: string[] = [];
  return {
    sealed,
    discarded,
    claimCheck: {
      seal: async (purpose: string, value: unknown) => {
        const handle = `cc_${String(sealed.size).padStart(64, '0')}`;
        sealed.set(handle, { purpose, value });
        return handle;
      },
      discard: async (handle: string) => void discarded.push(handle),
    } as unknown as StarterContext['claimCheck'],
  };
}

/** A starter context whose client records each start, or refuses it with `refusal`. */
function starterContext(refusal?: Error) {
  const store = fakeClaimCheck();
  const starts: { workflowType: string; options: { workflowId: string; args: unknown[] } }[] = [];
  const client = {
    workflow: {
      start: async (workflowType: string, options: { workflowId: string; args: unknown[] }) => {
        if (refusal) throw refusal;
        starts.push({ workflowType, options });
        return { workflowId: options.workflowId };
      },
      getHandle: (workflowId: string) => ({ workflowId }),
    },
  };
  const ctx = { client, taskQueue: 'payments', claimCheck: store.claimCheck } as unknown as StarterContext;
  return { ctx, starts, ...store };
}

const refusalOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (err: Error) => err.message,
  );

describe("a mandate request's check and seal, one for the starter and the Nexus helper", () => {
  it('the Nexus input is the input the starter starts the flow with: the BVN sealed, only its handle inside', async () => {
    const request = newMandateRequest();
    const nexusSide = fakeClaimCheck();
    const forNexus = await sealMandateForNexus(nexusSide, request);
    const starter = starterContext();
    await startMandate(starter.ctx, request);

    expect(starter.starts).toHaveLength(1);
    const [{ workflowType, options }] = starter.starts;
    expect(workflowType).toBe('mandateWorkflow');
    expect(options.workflowId).toBe(`mandate-${request.mandateRef}`);
    const started = options.args[0] as MandateInput;
    expect(started).toEqual(forNexus); // the same input (both stores made the same first handle)
    expect(forNexus.customer).toEqual({ ...request.customer, bvn: undefined, bvnHandle: expect.any(String) });
    expect(JSON.stringify(forNexus)).not.toContain(BVN);
    for (const store of [nexusSide, starter])
      expect([...store.sealed.values()]).toEqual([{ purpose: 'bvn', value: BVN }]);
    expect(nexusSide.sealed.has(forNexus.customer.bvnHandle)).toBe(true);
    expect(starter.discarded).toEqual([]);
  });

  it('a request its schema refuses is refused by both alike, naming field and rule, and nothing is sealed', async () => {
    const bad = newMandateRequest({ amount: 10_000, customer: { ...newMandateRequest().customer, bvn: '123' } });
    const nexusSide = fakeClaimCheck();
    const starter = starterContext();
    const nexusRefusal = await refusalOf(sealMandateForNexus(nexusSide, bad));
    expect(nexusRefusal).toBe(
      'invalid mandate input: amount must be at least 20000 kobo (N200); customer.bvn must be 11 digits',
    );
    expect(await refusalOf(startMandate(starter.ctx, bad))).toBe(nexusRefusal);
    expect(nexusSide.sealed.size + starter.sealed.size + starter.starts.length).toBe(0);
  });

  it("a start the server refuses deletes the starter's sealed BVN again", async () => {
    const request = newMandateRequest();
    const starter = starterContext(new WorkflowExecutionAlreadyStartedError('taken', 'mandate-x', 'mandateWorkflow'));
    await expect(startMandate(starter.ctx, request)).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
    expect([...starter.sealed.keys()]).toEqual(starter.discarded);
    expect(starter.discarded).toHaveLength(1);
  });
});
