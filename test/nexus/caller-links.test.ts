// The caller's namespace, read from the workflow event link a start request carries (src/nexus/caller.ts).
// The SDK's link converter is not public in 1.24.0, so our code reads the link's URL itself; these
// tests feed it links written by that converter (the form the server writes too), so an SDK upgrade
// that changes the form, or moves the converter, fails here before a deploy. The end-to-end test
// (payments-nexus.test.ts) checks the namespace a real server's link records in the flow's memo.
import { asyncLocalStorage } from '@temporalio/nexus/lib/context';
import {
  convertActivityLinkToNexusLink,
  convertNexusLinkToWorkflowEventLink,
  convertNexusOperationLinkToNexusLink,
  convertWorkflowEventLinkToNexusLink,
  convertWorkflowLinkToNexusLink,
} from '@temporalio/nexus/lib/link-converter';
import { temporal } from '@temporalio/proto';
import type { Link } from 'nexus-rpc';
import { callerOf, workflowEventNamespace } from '../../src/nexus/caller';

const { Link: ProtoLink } = temporal.api.common.v1;

/** The link the SDK writes for the calling workflow's event (an event reference, as a Nexus start's). */
const eventLink = (namespace: string, workflowId = 'order-7/checkout', runId = 'c0ffee-run') =>
  convertWorkflowEventLinkToNexusLink(
    ProtoLink.WorkflowEvent.fromObject({
      namespace,
      workflowId,
      runId,
      eventRef: { eventId: 5, eventType: 'EVENT_TYPE_NEXUS_OPERATION_SCHEDULED' },
    }),
  );

/** Links of the other kinds the SDK writes: none of them names a caller. */
const otherLinks: [string, Link][] = [
  [
    'a workflow link (no /history)',
    convertWorkflowLinkToNexusLink({ namespace: 'merchant', workflowId: 'w', runId: 'r' }),
  ],
  [
    'a Nexus operation link',
    convertNexusOperationLinkToNexusLink({ namespace: 'merchant', operationId: 'op', runId: 'r' }),
  ],
  ['an activity link', convertActivityLinkToNexusLink({ namespace: 'merchant', activityId: 'a', runId: 'r' })],
];

const link = (url: string, type = 'temporal.api.common.v1.Link.WorkflowEvent'): Link => ({ url: new URL(url), type });

describe("the caller's namespace from a workflow event link", () => {
  it.each(['merchant', 'merchant-b', 'team/payments eu', 'ns.with.dots_and%percent'])(
    'reads %p from the link the SDK writes, as the SDK itself reads it back',
    (namespace) => {
      const written = eventLink(namespace);
      expect(written.url.protocol).toBe('temporal:');
      expect(workflowEventNamespace(written)).toBe(namespace);
      expect(workflowEventNamespace(written)).toBe(convertNexusLinkToWorkflowEventLink(written).namespace);
    },
  );

  it('reads a request-id reference and a link with no reference too: the namespace is in the path', () => {
    const byRequest = convertWorkflowEventLinkToNexusLink(
      ProtoLink.WorkflowEvent.fromObject({
        namespace: 'merchant',
        workflowId: 'w',
        runId: 'r',
        requestIdRef: { requestId: 'req-1', eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED' },
      }),
    );
    expect(byRequest.url.searchParams.get('referenceType')).toBe('RequestIdReference');
    expect(workflowEventNamespace(byRequest)).toBe('merchant');
    expect(workflowEventNamespace(link('temporal:///namespaces/merchant/workflows/w/r/history'))).toBe('merchant');
  });

  it.each(otherLinks)('%s names no caller', (_what, other) => {
    expect(workflowEventNamespace(other)).toBeUndefined();
  });

  it.each([
    ['another scheme', 'https:///namespaces/merchant/workflows/w/r/history'],
    ['no namespace', 'temporal:///namespaces//workflows/w/r/history'],
    ['no workflow id', 'temporal:///namespaces/merchant/workflows//r/history'],
    ['no run id', 'temporal:///namespaces/merchant/workflows/w//history'],
    ['another collection', 'temporal:///namespaces/merchant/schedules/w/r/history'],
    ['a part too many', 'temporal:///namespaces/merchant/workflows/w/r/history/more'],
    ['another tail', 'temporal:///namespaces/merchant/workflows/w/r/details'],
    ['a malformed escape', 'temporal:///namespaces/%E0%A4%A/workflows/w/r/history'],
  ])('%s names no caller', (_what, url) => {
    expect(workflowEventNamespace(link(url))).toBeUndefined();
  });
});

describe('the caller of a request', () => {
  const through = <T>(endpoint: string, fn: () => T): T =>
    asyncLocalStorage.run({ endpoint, namespace: 'default', taskQueue: 'payments' } as never, fn);

  it('is the endpoint and the namespace of the first workflow event link; other links are passed over', () => {
    const ctx = { headers: {}, inboundLinks: [otherLinks[1]![1], eventLink('merchant-a'), eventLink('merchant-z')] };
    expect(through('payments-merchant-a', () => callerOf(ctx as never))).toEqual({
      endpoint: 'payments-merchant-a',
      namespace: 'merchant-a',
    });
  });

  it('is the endpoint alone for a request with no workflow event link (a cancel carries none)', () => {
    const withOthers = { headers: {}, inboundLinks: otherLinks.map(([, l]) => l) };
    expect(through('payments-merchant-a', () => callerOf(withOthers as never))).toEqual({
      endpoint: 'payments-merchant-a',
    });
    expect(through('payments-merchant-a', () => callerOf({ headers: {} } as never))).toEqual({
      endpoint: 'payments-merchant-a',
    });
  });

  it('is refused when the request names no endpoint (a server before 1.30)', () => {
    expect(() => through('', () => callerOf({ headers: {} } as never))).toThrow(
      'the Nexus request names no endpoint (server 1.30 or later)',
    );
  });
});
