// Every money-moving kind the harness drives, one small module each.
import { bankDriver } from './bank';
import { cardDriver } from './card';
import { mandateDriver } from './mandate';
import { posRemoteDriver } from './pos-remote';
import { posTerminalDriver } from './pos-terminal';
import { recurringDriver } from './recurring';
import type { KindDriver } from './types';
import { vaCreditDriver } from './va-credit';
import { vendDriver } from './vend';

export const DRIVERS: readonly KindDriver[] = [
  cardDriver,
  bankDriver,
  recurringDriver,
  mandateDriver,
  posTerminalDriver,
  posRemoteDriver,
  vendDriver,
  vaCreditDriver,
];
export type { KindDriver, FlowRecord, DriverContext, Expectation, Outcome } from './types';
