// A Nexus caller's notify.url (issue #42 §1): in production a plain-http target is refused before
// any flow starts, naming the field; https passes, and outside production http does too. The
// operation's own start function is called with no Temporal behind it: the refusal comes first.
import { HandlerError } from 'nexus-rpc';
import { paymentsNexusHandler } from '../../src/nexus/payments-handler';
import { electricityVend } from '../support/flow-inputs';

type StartFn = (ctx: unknown, input: unknown) => Promise<unknown>;
const vendStart = (production: boolean): StartFn => {
  const { vend } = (paymentsNexusHandler({ production }) as unknown as { handlers: { vend: { start: StartFn } } })
    .handlers;
  return (ctx, input) => vend.start(ctx, input);
};

/** What the start did: refused (the HandlerError's message) or went on to start a workflow (no context here). */
async function outcome(production: boolean, url: string): Promise<string> {
  try {
    await vendStart(production)({}, electricityVend(`nx-${Date.now()}`, { notify: { url } }));
    return 'started';
  } catch (err) {
    return err instanceof HandlerError ? `refused: ${err.message}` : 'went on to start';
  }
}

describe("a Nexus caller's notify.url", () => {
  it('is refused in production when it is not https, naming the field', async () => {
    expect(await outcome(true, 'http://hooks.example.com/e')).toBe(
      'refused: notify.url: must be an https:// URL in production',
    );
  });

  it('passes when https, and outside production when http', async () => {
    expect(await outcome(true, 'https://hooks.example.com/e')).toBe('went on to start');
    expect(await outcome(false, 'http://127.0.0.1:4100/events')).toBe('went on to start');
  });

  it('with credentials, is refused by the input schema everywhere', async () => {
    expect(await outcome(false, 'https://u:p@hooks.example.com/e')).toMatch(
      /^refused: .*notify\.url must not carry credentials/,
    );
  });
});
