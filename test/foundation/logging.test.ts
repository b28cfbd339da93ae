import { createLogger, REDACTED, redactDeep, SECRET_FIELD_NAMES, scrubText } from '../../src/logging/logger';
import { LogCapture } from '../support/stack';

describe('log redaction', () => {
  const secrets = {
    pan: '5555555555554444',
    cvv: '123',
    pin: '1234',
    otp: '123456',
    pinBlock: '0412AC89ABCDEF12',
    pinKey: 'A1B2C3D4E5F60718293A4B5C6D7E8F90',
    workingKey: '00112233445566778899AABBCCDDEEFF',
    masterKey: 'FFEEDDCCBBAA99887766554433221100',
    bvn: '22212345678',
    secretKey: 'sandbox_sk_local_development_key_0001',
  };

  function logAll() {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, level: 'trace' });
    logger.info({ card: { number: secrets.pan, cvv: secrets.cvv, expiry_month: '12' } }, 'charging card');
    logger.info({ authorization: { pin: secrets.pin } }, 'authorize');
    logger.info({ body: { authorization: { otp: secrets.otp } } }, 'otp');
    logger.info({ request: { pin_block: secrets.pinBlock, card_pan: secrets.pan } }, 'pos');
    logger.info(
      { keys: { pin_key: secrets.pinKey, working_key: secrets.workingKey, master_key: secrets.masterKey } },
      'keys',
    );
    logger.info(
      { customerInformation: { identity: { type: 'bvn', number: secrets.bvn } }, bvn: secrets.bvn },
      'mandate',
    );
    logger.info({ headers: { Authorization: `Bearer ${secrets.secretKey}` } }, 'http');
    logger.info({ config: { payments: { secretKey: secrets.secretKey } } }, 'config');
    logger.warn(`request failed with Bearer ${secrets.secretKey} for card ${secrets.pan}`);
    logger.error({ err: new Error(`boom ${secrets.secretKey}`) }, 'failed');
    logger.info({ nested: [{ deeper: { otp_token: secrets.otp, session_token: 'tok-123' } }] }, 'array');
    return capture;
  }

  it('keeps every secret out of every line, at any depth and in message text', () => {
    const capture = logAll();
    expect(capture.lines).toHaveLength(11);
    for (const value of Object.values(secrets)) {
      expect(capture.text).not.toContain(value);
    }
    expect(capture.text).not.toContain('tok-123');
  });

  it('replaces the values with a marker and keeps the rest of the line usable', () => {
    const records = logAll().records;
    expect(records[0]).toMatchObject({
      msg: 'charging card',
      level: 'info',
      card: { number: REDACTED, cvv: REDACTED },
    });
    expect(records[5]).toMatchObject({
      bvn: REDACTED,
      customerInformation: { identity: { type: 'bvn', number: REDACTED } },
    });
    expect(records[8].msg).toBe(`request failed with ${REDACTED} for card ${REDACTED}`);
  });

  it('leaves ordinary fields alone', () => {
    const capture = new LogCapture();
    createLogger({ destination: capture }).info({ transactionRef: 'ref-1', amount: 10000, currency: 'NGN' }, 'ok');
    expect(capture.records[0]).toMatchObject({ transactionRef: 'ref-1', amount: 10000, currency: 'NGN' });
  });
});

describe('log redaction by normalised field name', () => {
  /**
   * Every secret field name we know, as words (the test's own list, independent of the logger's),
   * plus the logger's list so nothing it claims to cover goes untested.
   */
  const KNOWN_SECRET_NAMES = [
    'card number',
    'card pan',
    'pan',
    'number',
    'cvv',
    'cvv2',
    'cvc',
    'expiry month',
    'expiry year',
    'card expiry month',
    'card expiry year',
    'track2',
    'chip data',
    'pin',
    'pin block',
    'pin key',
    'working key',
    'master key',
    'session key',
    'otp',
    'otp token',
    'session token',
    'access token',
    'token',
    'bvn',
    'api key',
    'secret key',
    'authorization',
    'password',
    'x service encrypted body',
    'x squad signature',
    'encryption keys',
    'codec token',
    'admin token',
    'key path',
    'tls key path',
    'temporal api key',
    'temporal tls key path',
    'payments secret key',
    'codec server token',
    'payload encryption keys',
    'claim check keys',
    'claim check database url',
    'sandbox admin token',
    // The rest of the logger's list, written out here too: a name dropped from the logger fails this test.
    'primary account number',
    'cvc2',
    'csc',
    'security code',
    'expiry',
    'expiry date',
    'exp month',
    'exp year',
    'card expiry',
    'track1',
    'track2 data',
    'track data',
    'icc data',
    'emv data',
    'pin block hex',
    'encrypted pin',
    'otp code',
    'pin key hex',
    'secret keys',
    'private key',
    'refresh token',
    'auth token',
    'id token',
    'proxy authorization',
    'cookie',
    'set cookie',
    'passwd',
    'passphrase',
    'secret',
    'client secret',
    'x service signature',
    'x squad encrypted body',
    'encryption key',
    'database url',
    'connection string',
    'postgres password',
    'sandbox secret keys',
  ];
  const names = [...new Set([...KNOWN_SECRET_NAMES, ...SECRET_FIELD_NAMES])];

  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  /** camelCase, PascalCase, snake_case, kebab-case, UPPER_SNAKE, UPPER-KEBAB and flat lower case. */
  const variants = (name: string): string[] => {
    const w = name.split(' ');
    return [
      ...new Set([
        w[0] + w.slice(1).map(cap).join(''),
        w.map(cap).join(''),
        w.join('_'),
        w.join('-'),
        w.join('_').toUpperCase(),
        w.join('-').toUpperCase(),
        w.join(''),
      ]),
    ];
  };

  let counter = 0;
  const values: string[] = [];
  const secret = () => {
    const v = `SeCrEtVaLuE${++counter}Q`;
    values.push(v);
    return v;
  };

  it('redacts every known name in every variant at every depth, in arrays and in Error properties', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture, level: 'trace' });
    let lines = 0;
    for (const name of names) {
      for (const key of variants(name)) {
        const inner = new Error('inner failure');
        Object.assign(inner, { [key]: secret(), details: { [key]: secret() } });
        const outer = new Error('outer failure', { cause: inner });
        Object.assign(outer, { request: { body: [{ [key]: secret() }] } });
        logger.info({ [key]: secret() }, 'top level');
        logger.info({ a: { b: { c: { [key]: secret() } } } }, 'three deep');
        logger.info({ list: [{ [key]: secret() }, [{ deeper: { [key]: secret() } }]] }, 'in arrays');
        logger.error({ err: outer }, 'error properties');
        logger.warn({ context: { failures: [outer] } }, 'error in an array');
        lines += 5;
      }
    }
    expect(capture.lines).toHaveLength(lines);
    const text = capture.rawText;
    const leaked = values.filter((v) => text.includes(v));
    expect(leaked).toEqual([]);
    // The redaction leaves a marker and the rest of the record.
    const errorLine = capture.records.find((r) => r.msg === 'error properties') as {
      err: { message: string; request: unknown };
    };
    expect(errorLine.err.message).toContain('outer failure');
    expect(errorLine.err.request).toEqual({ body: [expect.objectContaining({})] });
    const arrayLine = capture.records.find((r) => r.msg === 'error in an array') as {
      context: { failures: { message: string; cause: { message: string } }[] };
    };
    expect(arrayLine.context.failures[0].message).toBe('outer failure');
    expect(arrayLine.context.failures[0].cause.message).toBe('inner failure');
    expect(text).toContain(REDACTED);
  });

  it('keeps benign fields (amounts, references, display card data, claim-check handles) at any depth', () => {
    const capture = new LogCapture();
    const benign = {
      amount: 150000,
      transactionRef: 'ord-1001',
      transaction_ref: 'ord-1002',
      currency: 'NGN',
      last4: '4444',
      last_four: '4444',
      bin: '555555',
      brand: 'mastercard',
      cardHandle: 'cc_v1_abcdef',
      card_handle: 'cc_v1_abcdef',
      handle: 'cc_v1_123456',
      card_pan_masked: '555555******4444',
      keyId: 'k1',
      activeKeyId: 'k1',
      hasPinKey: true,
      pinTimeoutMs: 300000,
      status: 'awaiting_otp',
    };
    const err = Object.assign(new Error('declined'), { ...benign });
    createLogger({ destination: capture }).info({ ...benign, nested: { list: [{ ...benign }] }, err }, 'payment');
    const record = capture.records[0] as Record<string, unknown> & {
      nested: { list: Record<string, unknown>[] };
      err: Record<string, unknown>;
    };
    expect(record).toMatchObject(benign);
    expect(record.nested.list[0]).toMatchObject(benign);
    expect(record.err).toMatchObject(benign);
  });

  it('scrubs free text: Bearer values, secret keys, PAN-shaped numbers and URL passwords', () => {
    expect(scrubText('postgres://claimcheck:hunter2pass@db:5432/claimcheck failed')).toBe(
      `postgres://claimcheck:${REDACTED}@db:5432/claimcheck failed`,
    );
    expect(scrubText('Authorization: Bearer abc.def-ghi card 5555555555554444 key sk_live_abcdef')).toBe(
      `Authorization: ${REDACTED} card ${REDACTED} key ${REDACTED}`,
    );
  });
});

describe('redactDeep and scrubText at their edges', () => {
  it('a Bearer token after several spaces is scrubbed', () => {
    expect(scrubText('Authorization: Bearer   eyJhbGciOi.abc-123')).toBe(`Authorization: ${REDACTED}`);
  });

  it('track 2 data is scrubbed with its discretionary data', () => {
    expect(scrubText('track 5061000000000000=2512101234 read')).toBe(`track ${REDACTED} read`);
  });

  it('a separator followed by fewer than four digits is not track 2 (no expiry): the PAN is redacted, the digits after it stay', () => {
    expect(scrubText('card 5061000000000000=12 tries')).toBe(`card ${REDACTED}=12 tries`);
  });

  it('a PAN touching letters is scrubbed (a short D field, a word glued on); a run of digits longer than any PAN is kept', () => {
    expect(scrubText('card 5061000000000000D12 x')).toBe(`card ${REDACTED}D12 x`);
    expect(scrubText('pan5061000000000000abc')).toBe(`pan${REDACTED}abc`);
    expect(scrubText('ref 12345678901234567890')).toBe('ref 12345678901234567890');
  });

  it('a grouped number longer than any PAN is kept; a grouped PAN is not', () => {
    expect(scrubText('ref 2023 1126 0000 0000 1234 56')).toBe('ref 2023 1126 0000 0000 1234 56');
    expect(scrubText('ref 1234 5678 9012 3456 7890 1234')).toBe('ref 1234 5678 9012 3456 7890 1234');
    expect(scrubText('card 5555 5555 5555 4444')).toBe(`card ${REDACTED}`);
  });

  it('nesting deeper than 12 is cut, through objects, arrays and error causes alike', () => {
    const nest = (wrap: (inner: unknown) => unknown) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < 20; i++) v = wrap(v);
      return JSON.stringify(redactDeep(v));
    };
    for (const wrap of [
      (inner: unknown) => ({ inner }),
      (inner: unknown) => [inner],
      (inner: unknown) => new Error('wrapped', { cause: inner }),
    ]) {
      const out = nest(wrap);
      expect(out).toContain('[Truncated]');
      expect(out).not.toContain('leaf');
    }
    // An object 12 levels down is kept whole.
    let v: unknown = { leaf: 'kept' };
    for (let i = 0; i < 12; i++) v = { inner: v };
    expect(JSON.stringify(redactDeep(v))).toContain('"leaf":"kept"');
  });

  it('a circular reference is written as [Circular], a Buffer by its length only', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(redactDeep(loop)).toEqual({ name: 'loop', self: '[Circular]' });
    expect(redactDeep({ raw: Buffer.from('5555555555554444') })).toEqual({ raw: '[Buffer 16]' });
  });

  it("a line carries the process's pid", () => {
    const capture = new LogCapture();
    createLogger({ destination: capture }).info('hello');
    expect(capture.records[0].pid).toBe(process.pid);
  });
});
