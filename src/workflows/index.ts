// Every workflow the payments worker runs. Workflow code is deterministic:
// it imports only @temporalio/workflow, src/shared, and activity *types*.
export * from './webhook-inbox';
export * from './virtual-account-credit';
export * from './virtual-account-error-log-sweep';
export * from './pos-remote';
export * from './pos-terminal-lock';
export * from './pos-terminal';
export * from './vending';
export * from './mandate';
export * from './card-payment';
export * from './bank-payment';
export * from './ussd-payment';
export * from './checkout';
export * from './recurring';
export * from './scheduled-money';
export * from './pos-refund';
export * from './pos-refund-ledger';
export * from './pos-preauth';
export * from './reconciliation';
export * from './sms';
