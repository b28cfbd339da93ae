// The starters' one input error (src/shared/input-error.ts), and the names it replaced, kept so a
// backend's `instanceof` and imports keep working.
import { StarterInputError, type InputIssue } from '../shared/input-error';

export {
  StarterInputError,
  parseStarterInput,
  inputIssuesOf,
  describeInputIssues,
  type InputIssue,
} from '../shared/input-error';

/** @deprecated Use StarterInputError (the one input error of every starter). */
export const PaymentInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type PaymentInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export const CardInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type CardInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export const StarterValidationError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type StarterValidationError = StarterInputError;
/** @deprecated Use StarterInputError (a malformed OTP is the field `otp` with its rule). */
export const MandateOtpFormatError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type MandateOtpFormatError = StarterInputError;
/** @deprecated Use StarterInputError. */
export const InvalidStarterInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type InvalidStarterInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export const ScheduleInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type ScheduleInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export const ReconcileInputError = StarterInputError;
/** @deprecated Use StarterInputError. */
export type ReconcileInputError = StarterInputError;
/** @deprecated Use InputIssue. */
export type ReconcileIssue = InputIssue;
