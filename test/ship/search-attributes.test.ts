// The search-attribute registration that docker-compose's one-shot service and the Kubernetes Job
// run (dist/temporal/register-search-attributes.js): exactly SEARCH_ATTRIBUTE_REGISTRATION, on a
// fresh namespace, idempotent, and refusing a name already registered with another type.
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import {
  ensureSearchAttributes,
  indexedValueType,
  SearchAttributeConflictError,
} from '../../src/temporal/search-attribute-setup';
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
