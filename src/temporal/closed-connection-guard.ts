// The SDK's gRPC retry interceptor schedules each new attempt on a timer. If the Connection is
// closed while a call waits there (Temporal unreachable during a graceful shutdown, a server
// restart while a test tears down), the timer's new attempt throws "Channel has been shut down"
// out of the timer: an uncaught exception that ends the process, and the call's promise never
// settles. This interceptor sits between the retry interceptor and the channel and turns that
// throw into the call failing with CANCELLED, which the retry interceptor does not retry, so the
// caller gets a ServiceError and nothing escapes.
import { InterceptingCall, Metadata, status, type Interceptor, type InterceptingListener } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

/** The call under an InterceptingCall (grpc-js does not export its interface by name). */
type InterceptingCallInterface = ConstructorParameters<typeof InterceptingCall>[0];

/** The message grpc-js throws when a call is created on a closed channel. */
const CLOSED_CHANNEL = /Channel has been shut down/;

/** A call on a closed channel: it sends nothing and ends with CANCELLED once started. */
function closedChannelCall(): InterceptingCallInterface {
  return {
    start(_metadata: Metadata, listener?: Partial<InterceptingListener>) {
      setImmediate(() =>
        listener?.onReceiveStatus?.({
          code: status.CANCELLED,
          details: 'the Temporal connection was closed before the call could be retried',
          metadata: new Metadata(),
        }),
      );
    },
    cancelWithStatus() {},
    getPeer: () => '',
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    getAuthContext: () => null,
  };
}

/**
 * The retry interceptor passes the same options object to every attempt of a call: seeing it again
 * means a retry (from the timer). A first attempt on a closed channel still throws, as without the
 * guard: that throw happens inside the caller's request and rejects its promise (and the retry
 * interceptor cannot take a status from a first attempt that never reached the wire).
 */
const attempted = new WeakSet<object>();

export const closedConnectionGuard: Interceptor = (options, nextCall) => {
  const retry = attempted.has(options);
  attempted.add(options);
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    if (!retry || !(err instanceof Error) || !CLOSED_CHANNEL.test(err.message)) throw err;
    return new InterceptingCall(closedChannelCall());
  }
};

/** The SDK's default retry, then the guard (the list's first interceptor is the outermost). */
export function temporalClientInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedConnectionGuard];
}
