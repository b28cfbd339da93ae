// The virtual-account credit notification (E-2) as workflows see it.
export interface VirtualAccountCredit {
  transactionReference: string;
  virtualAccountNumber: string;
  principalAmount: string; // decimal string, as the spec sends it
  settledAmount: string;
  feeCharged: string;
  currency: string;
  customerIdentifier: string;
  transactionDate: string;
  version: 1 | 2 | 3;
  receivedAt: string;
}

export const virtualAccountCreditWorkflowId = (transactionReference: string): string => `va-credit-${transactionReference}`;
