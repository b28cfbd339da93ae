// The search-attribute registration that docker-compose's one-shot service and the Kubernetes Job
// run (dist/workers/register-search-attributes.js): exactly SEARCH_ATTRIBUTE_REGISTRATION, on a
// fresh namespace, idempotent, and refusing a name already registered with another type.
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import {
  checkNamespace,
  ensureSearchAttributes,
  indexedValueType,
  SearchAttributeConflictError,
} from '../../src/workers/search-attribute-setup';
import { eventually } from '../support/polling';
import { devServerAddress } from '../support/stack';

const { IndexedValueType } = temporal.api.enums.v1;
let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect({ address: devServerAddress() });
});
afterAll(() => connection?.close());

async function freshNamespace(): Promise<string> {
  const namespace = `sa-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // A new namespace reaches the server's namespace cache after a moment.
  await eventually(() => connection.operatorService.listSearchAttributes({ namespace }), {
    attempts: 102,
    intervalMs: 200,
    description: `namespace ${namespace}`,
    ignoreErrors: true,
  });
  return namespace;
}

describe('the search-attribute registration of docker-compose and Kubernetes', () => {
  it('maps the registration types to the server enum', () => {
    expect(indexedValueType('Keyword')).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    expect(indexedValueType('Int')).toBe(IndexedValueType.INDEXED_VALUE_TYPE_INT);
    expect(indexedValueType('KeywordList')).toBe(IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST);
    expect(() => indexedValueType('Money')).toThrow(/unknown search attribute type Money/);
  });

  it('registers every attribute of SEARCH_ATTRIBUTE_REGISTRATION on a fresh namespace, then finds them all present', async () => {
    const namespace = await freshNamespace();
    const first = await ensureSearchAttributes(connection, namespace);
    expect(first.added.sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_REGISTRATION).sort());
    expect(first.alreadyPresent).toEqual([]);
    const listed = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_REGISTRATION))
      expect(listed[name]).toBe(indexedValueType(type));

    const again = await ensureSearchAttributes(connection, namespace);
    expect(again).toEqual({ namespace, added: [], alreadyPresent: Object.keys(SEARCH_ATTRIBUTE_REGISTRATION) });
  });

  it('refuses a name registered with another type and adds nothing', async () => {
    const namespace = await freshNamespace();
    await ensureSearchAttributes(connection, namespace, { PaymentFlow: 'Int' });
    const err = await ensureSearchAttributes(connection, namespace).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SearchAttributeConflictError);
    expect((err as SearchAttributeConflictError).conflicts).toEqual([
      { name: 'PaymentFlow', wanted: 'Keyword', registered: 'INDEXED_VALUE_TYPE_INT' },
    ]);
    const listed = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    expect(listed.PaymentReference).toBeUndefined();
  });
});

describe("the worker's namespace check at start", () => {
  const target = (namespace: string) => ({ address: devServerAddress(), namespace });

  it('passes a namespace that holds every attribute with its type', async () => {
    const namespace = await freshNamespace();
    await ensureSearchAttributes(connection, namespace);
    expect(await checkNamespace(connection, target(namespace))).toEqual({});
  });

  it('names a namespace that does not exist, with the commands that create it and register the attributes', async () => {
    const { problem } = await checkNamespace(connection, target('no-such-namespace'));
    expect(problem).toMatch(
      new RegExp(
        `^TEMPORAL_NAMESPACE: namespace no-such-namespace does not exist on ${devServerAddress()}; create it: temporal operator namespace create --address \\S+ --namespace no-such-namespace, then register the search attributes: temporal operator search-attribute create .* --type Keyword && temporal operator search-attribute create .*--name PaymentAmount --type Int$`,
      ),
    );
  });

  it('names every missing attribute, one create command per type', async () => {
    const namespace = await freshNamespace();
    await ensureSearchAttributes(connection, namespace, { PaymentFlow: 'Keyword', PaymentReference: 'Keyword' });
    const { problem } = await checkNamespace(connection, target(namespace));
    expect(problem).toBe(
      `TEMPORAL_NAMESPACE: namespace ${namespace} lacks the search attributes PaymentStatus (Keyword), PaymentAmount (Int), PaymentCurrency (Keyword), ReconciliationStatus (Keyword), PaymentServiceReference (Keyword) that the flows write; register them: ` +
        `temporal operator search-attribute create --address ${devServerAddress()} --namespace ${namespace} --name PaymentStatus --name PaymentCurrency --name ReconciliationStatus --name PaymentServiceReference --type Keyword && ` +
        `temporal operator search-attribute create --address ${devServerAddress()} --namespace ${namespace} --name PaymentAmount --type Int`,
    );
  });

  it('names an attribute registered with another type, with the commands that replace it', async () => {
    const namespace = await freshNamespace();
    const { PaymentFlow: _flow, ...rest } = SEARCH_ATTRIBUTE_REGISTRATION;
    await ensureSearchAttributes(connection, namespace, { ...rest, PaymentFlow: 'Int' });
    const { problem } = await checkNamespace(connection, target(namespace));
    expect(problem).toBe(
      `TEMPORAL_NAMESPACE: namespace ${namespace} has PaymentFlow registered as INDEXED_VALUE_TYPE_INT where the flows write Keyword; remove and register again: ` +
        `temporal operator search-attribute remove --address ${devServerAddress()} --namespace ${namespace} --name PaymentFlow --yes && ` +
        `temporal operator search-attribute create --address ${devServerAddress()} --namespace ${namespace} --name PaymentFlow --type Keyword`,
    );
  });
});
