// `npm run cli -- sms ...` as a user runs it, against a running stack: templates CRUD, a send from
// a JSON file with its progress lines and per-number result, a campaign created and followed to
// success, campaigns listed and deleted; refusals (a broken rule, a 404) exit 2 with the reason.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAMPAIGN_SEND_DELAY_MS, SMS_FAILING_NUMBER } from '../../src/sandbox';
import { smsCampaignStateQuery } from '../../src/shared/sms';
import { smsCampaignHandle } from '../../src/starters/sms';
import { cliAgainst, spawnCli } from '../support/cli';
import { testConfig, useServices } from '../support/stack';
import { SandboxAdmin } from '../support/sandbox-admin';
import { eventually } from '../support/polling';

const config = testConfig();
const stack = useServices(config);
const { cli, cliEnv } = cliAgainst(config, stack);

describe('`npm run cli -- sms ...` as a user runs it, against a running stack', () => {
  it('templates, a send with progress and per-number results, a campaign followed to success, refusals exit 2', async () => {
    // A send from a file: one good number, one bad, one the service refuses.
    const dir = mkdtempSync(join(tmpdir(), 'sms-cli-'));
    const file = join(dir, 'send.json');
    const ref = `cli-${randomUUID()}`;
    writeFileSync(
      file,
      JSON.stringify({
        reference: ref,
        sender_id: 'SHOP',
        messages: [
          { phone_number: '2348031112222', message: 'hi' },
          { phone_number: '12', message: 'hi' },
          { phone_number: SMS_FAILING_NUMBER, message: 'hi' },
        ],
      }),
    );
    // A template created (G5), the send, and a send refused for a broken rule (nothing starts):
    // three commands that share nothing, side by side.
    const [created, sent, badSend] = await Promise.all([
      cli(['sms', 'templates', 'create', '--name', 'Promo', '--description', 'promo', '--message', 'Big sale']),
      cli(['sms', 'send', '--file', file]),
      cli(['sms', 'send', '--file', file, '--reference', 'bad ref']),
    ]);
    expect(created.code).toBe(0);
    const templateId = /created template ([0-9a-f-]{36})/.exec(created.stdout)![1];
    const updated = await cli(['sms', 'templates', 'update', '--id', templateId, '--message', 'Bigger sale']);
    expect(updated).toMatchObject({ code: 0, stdout: expect.stringContaining('"message": "Bigger sale"') });

    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain(`started sms-send-${ref}`);
    expect(sent.stdout).toContain(
      `[sms-send ${ref}] partially_sent batches=1/1 sent=1/3 failed=1 invalid=1 cost=4.00 NGN (final) — sent 1 of 3, 1 failed, 1 invalid; cost 4.00 NGN`,
    );
    expect(sent.stdout).toContain(
      '"error": "messages[1].phone_number must be a phone number: 7 to 15 digits, optionally after a leading +"',
    );
    // Progress lines carry counts, never a number.
    expect(
      sent.stdout
        .split('\n')
        .filter((l) => l.startsWith('[sms-send'))
        .join('\n'),
    ).not.toMatch(/2348031112222|2348000000000/);
    expect(badSend).toMatchObject({
      code: 2,
      stdout: expect.stringContaining('refused: invalid SMS send input: reference must be 1 to 100 letters'),
    });

    // A campaign created and followed; the service sends it when the sandbox clock moves.
    const cref = `cli-${randomUUID()}`;
    const name = `CLI ${randomUUID().slice(0, 8)}`;
    const follower = spawnCli(
      [
        'sms',
        'campaigns',
        'create',
        '--reference',
        cref,
        '--name',
        name,
        '--bucket',
        '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10',
        '--sender-id',
        'SHOP',
        '--template',
        templateId,
        '--poll-interval',
        '100ms',
      ],
      cliEnv(),
    );
    const { exited } = follower;
    const handle = smsCampaignHandle(stack.services.starters, cref);
    // A query that throws: not started yet.
    const following = await eventually(
      () => handle.query(smsCampaignStateQuery),
      (s) => s.serviceStatus === 'pending' && follower.output().includes('service=pending'),
      {
        timeoutMs: 60_000,
        ignoreErrors: true,
        description: 'the campaign pending at the service, as the follower shows',
        returnLastOnTimeout: true,
      },
    );
    expect(following.serviceStatus).toBe('pending');
    const campaignId = following.campaignId!;
    await new SandboxAdmin(stack.services.sandboxUrl!).advanceClock(CAMPAIGN_SEND_DELAY_MS);
    expect(await exited).toBe(0);
    expect(follower.output()).toContain(`started sms-campaign-${cref}`);
    expect(follower.output()).toContain(`[sms-campaign ${cref}] following campaign=${campaignId} service=pending`);
    expect(follower.output()).toMatch(
      new RegExp(
        `\\[sms-campaign ${cref}\\] success campaign=${campaignId} service=success polls=\\d+ \\(final\\) — campaign ${campaignId} was sent`,
      ),
    );

    // The campaign listed and deleted, and the template deleted (then a 404 from the service): two
    // independent sequences, side by side.
    await Promise.all([
      (async () => {
        const listed = await cli(['sms', 'campaigns', 'list', '--status', 'success', '--name', name]);
        expect(listed).toMatchObject({
          code: 0,
          stdout: expect.stringContaining(`1 campaign(s) with status success\n${campaignId}  ${name}`),
        });
        expect((await cli(['sms', 'campaigns', 'delete', '--id', campaignId])).code).toBe(0);
      })(),
      (async () => {
        expect((await cli(['sms', 'templates', 'delete', '--id', templateId])).code).toBe(0);
        expect(await cli(['sms', 'templates', 'delete', '--id', templateId])).toMatchObject({
          code: 2,
          stdout: expect.stringContaining('refused by the service (404): Template not found'),
        });
      })(),
    ]);
  }, 120_000);

  it('a send whose batch answer was lost parks for a person: `sms send` stops following and exits 3', async () => {
    const admin = new SandboxAdmin(stack.services.sandboxUrl!);
    await admin.fault({ method: 'POST', path: '^/sms/send/instant$', kind: 'drop-after-processing', count: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'sms-cli-parked-'));
    const file = join(dir, 'send.json');
    const ref = `cli-parked-${randomUUID()}`;
    writeFileSync(
      file,
      JSON.stringify({
        reference: ref,
        sender_id: 'SHOP',
        messages: [{ phone_number: '2348031113333', message: 'hi' }],
      }),
    );
    const sent = await cli(['sms', 'send', '--file', file]);
    expect(sent.code).toBe(3);
    expect(sent.stdout).toContain(`[sms-send ${ref}] outcome_unknown`);
    // Still open, waiting for `ops resolve`: the follow did not wait for it.
    expect((await stack.services.client.workflow.getHandle(`sms-send-${ref}`).describe()).status.name).toBe('RUNNING');
    await admin.clearFaults();
  }, 60_000);
});
