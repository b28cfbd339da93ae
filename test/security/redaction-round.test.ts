// Issue #27 section 6, redaction: PANs in groups, track2 with its 'D' separator, and the field names
// pan, expiry_month, expiry_year and pinBlock, in log lines and in error bodies kept by the API client.
import { redactBody, REDACTED } from '../../src/api/redact';
import { createLogger, scrubText } from '../../src/logging/logger';
import { Writable } from 'node:stream';

const PAN = '4111111111111111';

describe('free text: PANs written in groups and track2 data', () => {
  it.each([
    ['spaces', '4111 1111 1111 1111'],
    ['dashes', '4111-1111-1111-1111'],
    ['Amex 4-6-5 groups', '3782 822463 10005'],
    ['19 digits in groups', '6011 0000 0000 0000 004'],
  ])('redacts a PAN written with %s', (_label, written) => {
    const out = scrubText(`card ${written} declined`);
    expect(out).toBe(`card ${REDACTED} declined`);
    expect(out.replace(/\D/g, '')).not.toContain(written.replace(/\D/g, '').slice(0, 12));
  });

  it.each([
    ['the D separator', `${PAN}D25121010000000000`],
    ['the = separator and sentinels', `;${PAN}=25121010000000000?`],
  ])('redacts track2 data with %s', (_label, track2) => {
    const out = scrubText(`track2 ${track2} read`);
    expect(out).not.toContain(PAN);
    expect(out).not.toContain('2512101');
    expect(out).toContain(REDACTED);
  });

  it('leaves dates, phone numbers, amounts and short groups alone', () => {
    const benign = 'on 2026-11-26 12:00, call 0803 123 4567, amount 5000, ref TX-2026-0001, bin 411111';
    expect(scrubText(benign)).toBe(benign);
  });
});

describe('field names: pan, expiry_month, expiry_year, pinBlock', () => {
  const fields = { pan: PAN, expiry_month: '12', expiry_year: '2027', pinBlock: '0412AC89ABCDEF12' };

  it('are redacted in error bodies the API client keeps (redactBody)', () => {
    const out = redactBody({
      data: { card: fields, reference: 'ref-1' },
      message: `card ${'4111-1111-1111-1111'}`,
    }) as {
      data: { card: Record<string, unknown>; reference: string };
      message: string;
    };
    for (const name of Object.keys(fields)) expect(out.data.card[name]).toBe(REDACTED);
    expect(out.data.reference).toBe('ref-1');
    expect(out.message).toBe(`card ${REDACTED}`);
    expect(JSON.stringify(out)).not.toMatch(/2027|0412AC89/);
  });

  it('are redacted in log lines, with the free text of the message', () => {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    });
    const logger = createLogger({ destination: capture, level: 'info' });
    logger.info({ card: fields, track: `${PAN}D2512101` }, 'card 4111 1111 1111 1111 read');
    const text = lines.join('\n');
    expect(text).not.toMatch(/4111.?1111.?1111.?1111|2027|0412AC89/);
    expect(text).toContain(REDACTED);
  });
});
