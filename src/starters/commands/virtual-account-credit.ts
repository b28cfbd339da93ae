// CLI: `npm run cli -- va <command>`.
//
//   va create --customer-id CUST1 --first-name Ada --last-name Obi --phone 08012345678 \
//             --dob 01/15/1990 --gender 2 --address "1 Marina" --bvn-file bvn.txt
//   va account CUST1 | va customer 4567891234 | va accounts | va transactions [--customer-id|--account|--reference]
//   va credit <reference> | va retry-handoff <reference> --operator --reason
//   (va error-log | va sweep: ./virtual-account-error-log-sweep.ts)
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  createBusinessVirtualAccount,
  createCustomerVirtualAccount,
  getVirtualAccountCreditState,
  retryVirtualAccountCreditHandoff,
} from '../virtual-account-credit';
import { currentIo, withApi, type ContextFactory } from './context';
import type { VirtualAccountTransaction } from '../../api/schemas/virtual-accounts';
import type { PaymentsClient } from '../../api/client';
import { StarterInputError } from '../../shared/input-error';
import { printResult, progress } from './output';
import { sentAsInput, testEnvironmentOnly } from './test-environment';

const print = (v: unknown) => progress(JSON.stringify(v, null, 2));

/** The BVN is read from a file or stdin ('-'), never from the command line (shell history, process list). */
function readBvn(file: string): string {
  return (file === '-' ? currentIo().stdin.readAllSync() : readFileSync(file, 'utf8')).trim();
}

/** One credit as `va transactions` lists it, with its freeze state. */
function transactionLine(t: VirtualAccountTransaction): string {
  const frozen = t.frozen_transaction
    ? ` FROZEN(${t.frozen_transaction.freeze_transaction_ref ?? ''}${t.frozen_transaction.reason ? `: ${t.frozen_transaction.reason}` : ''})`
    : '';
  return `${t.transaction_reference}  ${t.virtual_account_number ?? ''}  ${t.principal_amount ?? ''} ${t.currency ?? ''}  settled ${t.settled_amount ?? ''}${frozen}`;
}

/** Every credit of the merchant, unfiltered (C4): a filter with it is refused, as that list takes none. */
async function printAllTransactions(o: { customerId?: string; account?: string; reference?: string }): Promise<void> {
  const filters = (['customerId', 'account', 'reference'] as const).filter((k) => o[k] !== undefined);
  if (filters.length > 0)
    throw new StarterInputError('va transactions', [
      {
        field: '--all',
        rule: 'takes no filter (the unfiltered list, C4); drop --customer-id, --account and --reference',
      },
    ]);
  const rows = (await withApi((api) => api.virtualAccounts.merchantTransactions())).data;
  printResult(rows, [...rows.map(transactionLine), `${rows.length} transaction(s)`]);
}

/** The `va` commands of accounts, lookups and credits; `va` itself is made in ./index.ts. */
export function registerVirtualAccountCreditCommands(va: Command, context: ContextFactory): void {
  registerAccountCreation(va);
  registerLookups(va);
  registerCredits(va, context);
}

/** A customer's account (C1) or a business's (C2). */
function registerAccountCreation(va: Command): void {
  va.command('create')
    .description('create a customer account (C1; the BVN is checked against name, date of birth, gender and phone)')
    .requiredOption('--customer-id <id>', 'your unique customer_identifier')
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .requiredOption('--phone <number>', 'mobile_num (at most 11 digits)')
    .requiredOption('--dob <mm/dd/yyyy>', 'date of birth')
    .requiredOption('--gender <1|2>', "'1' male, '2' female")
    .requiredOption('--address <text>', 'address')
    .requiredOption('--bvn-file <file>', "file holding the BVN ('-' for stdin)")
    .option('--email <address>', 'e-mail')
    .option('--beneficiary <account>', '10-digit settlement account (absent: merchant wallet, T+1)')
    .action(
      async (o: {
        customerId: string;
        firstName: string;
        lastName: string;
        phone: string;
        dob: string;
        gender: string;
        address: string;
        bvnFile: string;
        email?: string;
        beneficiary?: string;
      }) => {
        const account = await withApi((api) =>
          createCustomerVirtualAccount(
            { api },
            {
              customer_identifier: o.customerId,
              first_name: o.firstName,
              last_name: o.lastName,
              mobile_num: o.phone,
              dob: o.dob,
              gender: o.gender as '1' | '2',
              address: o.address,
              bvn: readBvn(o.bvnFile),
              ...(o.email ? { email: o.email } : {}),
              ...(o.beneficiary ? { beneficiary_account: o.beneficiary } : {}),
            },
          ),
        );
        print(account);
      },
    );

  va.command('create-business')
    .description('create a business account (C2)')
    .requiredOption('--customer-id <id>', 'alphanumeric customer_identifier')
    .requiredOption('--business-name <name>', 'business name')
    .requiredOption('--phone <number>', 'mobile_num (at most 11 digits)')
    .requiredOption('--bvn-file <file>', "file holding the BVN ('-' for stdin)")
    .option('--beneficiary <account>', '10-digit settlement account')
    .action(
      async (o: { customerId: string; businessName: string; phone: string; bvnFile: string; beneficiary?: string }) => {
        print(
          await withApi((api) =>
            createBusinessVirtualAccount(
              { api },
              {
                customer_identifier: o.customerId,
                business_name: o.businessName,
                mobile_num: o.phone,
                bvn: readBvn(o.bvnFile),
                ...(o.beneficiary ? { beneficiary_account: o.beneficiary } : {}),
              },
            ),
          ),
        );
      },
    );
}

/** Accounts, customers and credits as the service lists them (C3-C8). */
function registerLookups(va: Command): void {
  va.command('account <customerId>')
    .description('the account of a customer_identifier (C7)')
    .action(async (id: string) => {
      await printData((api) => api.virtualAccounts.accountByCustomerIdentifier({ customer_identifier: id }));
    });

  va.command('customer <accountNumber>')
    .description('the customer of a 10-digit account number (C6)')
    .action(async (n: string) => {
      await printData((api) => api.virtualAccounts.customerByAccountNumber({ virtual_account_number: n }));
    });

  va.command('accounts')
    .description("the merchant's accounts (C8)")
    .option('--page <n>', 'page', '1')
    .option('--per-page <n>', 'rows per page', '20')
    .action(async (o: { page: string; perPage: string }) => {
      await printData((api) => api.virtualAccounts.merchantAccounts({ page: o.page, perPage: o.perPage }));
    });

  va.command('transactions')
    .description(
      "credits with their freeze state: one customer's (--customer-id, C3), every one (--all, C4) or filtered (C5)",
    )
    .option('--all', 'every credit of the merchant, unfiltered (C4; takes no other option)')
    .option('--customer-id <id>', "one customer's transactions (C3)")
    .option('--account <number>', 'filter by virtual account number (C5)')
    .option('--reference <ref>', 'filter by transaction reference (C5)')
    .option('--per-page <n>', 'rows per page of the filtered list (C5)', '20')
    .action(
      async (o: { all?: boolean; customerId?: string; account?: string; reference?: string; perPage: string }) => {
        if (o.all) return printAllTransactions(o);
        const rows = await withApi(async (api) =>
          o.customerId
            ? (await api.virtualAccounts.customerTransactions({ customer_identifier: o.customerId })).data
            : (
                await api.virtualAccounts.merchantTransactionsFiltered({
                  perPage: Number(o.perPage),
                  ...(o.account ? { virtualAccount: o.account } : {}),
                  ...(o.reference ? { transactionReference: o.reference } : {}),
                })
              ).data.rows,
        );
        for (const t of rows) progress(transactionLine(t));
        progress(`${rows.length} transaction(s)`);
      },
    );
}

/** A test credit (C9), and the credit workflows. */
function registerCredits(va: Command, context: ContextFactory): void {
  va.command('simulate-credit')
    .description(
      'test environment only: credit a virtual account as a transfer would (C9; its credit notification, E-2, follows)',
    )
    .requiredOption('--account <number>', 'the 10-digit virtual account number')
    .option('--amount <naira>', "a decimal string such as 1000.00 (default: the service's)")
    .action(async (o: { account: string; amount?: string }) => {
      testEnvironmentOnly('va simulate-credit');
      await sentAsInput('va simulate-credit', () =>
        withApi((api) =>
          api.virtualAccounts.simulatePayment({
            virtual_account_number: o.account,
            ...(o.amount !== undefined ? { amount: o.amount } : {}),
          }),
        ),
      );
      const result = { virtual_account_number: o.account, amount: o.amount ?? null, credited: true };
      printResult(
        result,
        `credited ${o.account}${o.amount ? ` with ${o.amount} NGN` : ''} (test credit; its notification follows)`,
      );
    });

  va.command('credit <reference>')
    .description("a credit workflow's state (recording, frozen, handing_over, handoff_failed, credited)")
    .action(async (ref: string) => {
      print(await getVirtualAccountCreditState(await context(), ref));
    });

  va.command('retry-handoff <reference>')
    .description('operator: hand a credit over again after the handler gave up (handoff_failed)')
    .requiredOption('--operator <name>', 'who decides')
    .requiredOption('--reason <text>', 'why')
    .action(async (ref: string, o: { operator: string; reason: string }) => {
      print(await retryVirtualAccountCreditHandoff(await context(), ref, o));
    });
}

/** Prints the `data` of one service call. */
async function printData(call: (api: PaymentsClient) => Promise<{ data: unknown }>): Promise<void> {
  print((await withApi(call)).data);
}
