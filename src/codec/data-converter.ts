// The data converter shared by every client and worker: encrypted payloads, and failure
// messages and stack traces moved into the (encrypted) encoded attributes.
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, type EncryptionKey } from './aes-gcm-codec';

export interface EncryptionSettings {
  keys: EncryptionKey[];
  activeKeyId: string;
}

/** Module exporting `failureConverter`; a pre-built workflow bundle must include it too. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

export function createDataConverter(settings: EncryptionSettings): DataConverter {
  return {
    payloadCodecs: [new AesGcmPayloadCodec(settings.keys, settings.activeKeyId)],
    // Loaded inside the workflow sandbox too, hence a module path rather than an instance.
    failureConverterPath: FAILURE_CONVERTER_PATH,
  };
}
