// Typed starters of every flow, for backends. One line per flow.
export * from './connect';
export * from './input-error';
export * from './progress';
export * from './pos';
export * from './pos-refund';
export * from './pos-preauth';
export * from './vending';
export * from './mandates';
export * from './payments';
export * from './virtual-accounts';
export * from './ops';
export * from './schedules';
export * from './sms';
export * from './temporal-retry';
export * from './reconciliation';
