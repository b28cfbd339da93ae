import { createLogger, REDACTED } from '../../src/logging/logger';
import { LogCapture } from '../helpers/temporal';

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
    logger.info({ keys: { pin_key: secrets.pinKey, working_key: secrets.workingKey, master_key: secrets.masterKey } }, 'keys');
    logger.info({ customerInformation: { identity: { type: 'bvn', number: secrets.bvn } }, bvn: secrets.bvn }, 'mandate');
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
    expect(records[0]).toMatchObject({ msg: 'charging card', level: 'info', card: { number: REDACTED, cvv: REDACTED } });
    expect(records[5]).toMatchObject({ bvn: REDACTED, customerInformation: { identity: { type: 'bvn', number: REDACTED } } });
    expect(records[8].msg).toBe(`request failed with ${REDACTED} for card ${REDACTED}`);
  });

  it('leaves ordinary fields alone', () => {
    const capture = new LogCapture();
    createLogger({ destination: capture }).info({ transactionRef: 'ref-1', amount: 10000, currency: 'NGN' }, 'ok');
    expect(capture.records[0]).toMatchObject({ transactionRef: 'ref-1', amount: 10000, currency: 'NGN' });
  });
});
