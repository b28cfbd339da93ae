// AES-256-GCM PayloadCodec. Temporal stores only ciphertext; the key id travels in the
// payload metadata so keys can rotate: new payloads use the active key, old ones still decode.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;

  constructor(
    keys: EncryptionKey[],
    private readonly activeKeyId: string = keys[0]?.id,
  ) {
    if (keys.length === 0) throw new Error('AesGcmPayloadCodec needs at least one key');
    for (const k of keys) {
      if (k.key.length !== 32) throw new Error(`encryption key ${k.id} must be 32 bytes for AES-256`);
    }
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    if (!this.keys.has(activeKeyId)) throw new Error(`active key ${activeKeyId} is not among the keys`);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.keys.get(this.activeKeyId)!;
    return payloads.map((payload) => {
      const plaintext = temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      // The key id is authenticated as associated data, so it cannot be swapped.
      cipher.setAAD(Buffer.from(this.activeKeyId));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: encoder.encode(ENCRYPTED_ENCODING),
          [KEY_ID_METADATA]: encoder.encode(this.activeKeyId),
        },
        data: Buffer.concat([iv, body, cipher.getAuthTag()]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
      if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
      if (!keyIdBytes) throw new ValueError('encrypted payload has no key id');
      const keyId = decoder.decode(keyIdBytes);
      const key = this.keys.get(keyId);
      if (!key) throw new ValueError(`no decryption key with id ${keyId}`);
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) throw new ValueError('encrypted payload is too short');
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(keyId));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plaintext = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return temporal.api.common.v1.Payload.decode(plaintext);
    });
  }
}
