// Typed starters of every flow, for backends. One line per flow.
export * from './connect';
export * from './progress';
export * from './pos';
export * from './vending';
export * from './mandates';
export * from './payments';
export * from './sms';
export * from './temporal-retry';
