// Failure messages and stack traces can carry business data; with encodeCommonAttributes
// they are moved into the encoded (and so encrypted) attributes of the failure.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
