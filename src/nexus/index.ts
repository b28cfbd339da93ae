// `@payflow/temporal/nexus`: what docs/nexus.md tells a Temporal-native caller to import in its
// backend and worker processes — the `payments` service definition, the sealing helpers (run in
// the caller's backend, so no card, BVN or OTP enters its history) and the encrypting data converter both
// sides must share. The caller's workflow code imports `@payflow/temporal/nexus/service` instead:
// that one names only nexus-rpc and types, as the workflow bundle needs.
export {
  PAYMENTS_NEXUS_SERVICE,
  paymentsNexusService,
  type MandateDebitOperationInput,
  type MandateOtpOperationInput,
  type MandateRefOperationInput,
  type PaymentsNexusService,
  type PosCompletionOperationInput,
  type PosReleaseOperationInput,
} from './payments-service';
export {
  sealCardPaymentForNexus,
  sealMandateForNexus,
  sealMandateOtpForNexus,
  sealPosCompletionForNexus,
} from './sealing';
export { createDataConverter, FAILURE_CONVERTER_PATH, type EncryptionSettings } from '../codec/data-converter';
export type { EncryptionKey } from '../codec/aes-gcm-codec';
