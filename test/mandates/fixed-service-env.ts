// The time-skipping worker the FIXED mandate's event tests share: the small service model's
// activities and the real merchant-event delivery, delivering to a listener that verifies each
// event with the worker's NOTIFY_SECRET.
import { randomUUID } from 'node:crypto';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { newNotifySecret } from '../../src/notify';
import { useEventReceiver } from '../notify/receiver';
import { quietLogger } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { fixedMandateService } from './fixed-service';
import { DAY } from './helpers';

/** Call at a test file's top level: registers the environment's and the listener's hooks. */
export function useFixedMandateWithEvents(name: string) {
  const taskQueue = `${name}-${randomUUID()}`;
  const secret = newNotifySecret();
  const service = fixedMandateService();
  const env = useTimeSkippingEnv({
    quietRuntime: true,
    worker: {
      taskQueue,
      activities: () => {
        const deps = {
          logger: quietLogger(),
          config: { notify: { retryForMs: DAY, secret }, temporal: { taskQueue } },
          temporal: env.client,
        } as unknown as ActivityDeps;
        return { ...service.activities, ...createMerchantEventDeliveryActivities(deps) };
      },
    },
  });
  const listener = useEventReceiver(secret);
  return { taskQueue, service, env, listener };
}
