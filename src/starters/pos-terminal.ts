// Typed starter of the POS terminal transaction flow (F3/F4), and the POS terminal session.
//
// Terminal session (configuration and key exchange, F1 + F2) runs HERE, in the backend that owns
// the terminal, straight through the API client, and never through Temporal: a workflow's
// inputs, results and activity results are written to history (encrypted or not), and
// `pin_key` must never be persisted (the spec's key exchange: hold in memory only, never log, persist or send
// to a third party). The session object keeps `pin_key` in a private field, leaves it out of
// JSON and of util.inspect, and hands it out only through `pinKey()`.
//
// The card transaction (F3/F4) is a workflow: the device builds the pin_block with the key. The
// starter checks every rule of the transaction's fields on the full card read, then seals the card data (PAN, expiry,
// cardholder name, card sequence number, track2, chip data, pin_block) together into the
// claim-check store (purpose 'pos-card'): the workflow input carries only the handle, BIN and
// last four, so neither the pin_block nor any card data is in Temporal history, not even encrypted.
import { inspect } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import type { PaymentsClient, PosTerminalConfiguration } from '../api';
import {
  POS_SEALED_FIELDS,
  PosTransactionInputSchema,
  posTransactionStartSearch,
  posTransactionWorkflowId,
  type PosSealedCardData,
  type PosTransactionInput,
} from '../shared/pos-terminal';
import type { StarterContext } from './connect';
import type { Workflow } from '@temporalio/common';
import { handleFor, runToResult, startFlow, type FlowStart } from './start-flow';
import type { posTerminalTransactionWorkflow } from '../workflows/pos-terminal';
import { StarterInputError, parseStarterInput } from '../shared/input-error';

// ---- POS terminal session (configuration and key exchange), outside Temporal ----------------

export interface PosTerminalSessionOptions {
  serial_no: string;
  /** Refresh the keys: a fresh exchange with the processor (slower); only when keys seem stale. */
  refresh?: boolean;
}

export class PosTerminalSession {
  readonly #api: PaymentsClient;
  #pinKey: string;
  private constructor(
    api: PaymentsClient,
    readonly serialNo: string,
    readonly configuration: PosTerminalConfiguration,
    pinKey: string,
  ) {
    this.#api = api;
    this.#pinKey = pinKey;
  }

  /** The terminal configuration (F1) once, then the key exchange (F2). Throws the client's errors (400 'Incorrect device information', 404 'Terminal not found'). */
  static async open(api: PaymentsClient, opts: PosTerminalSessionOptions): Promise<PosTerminalSession> {
    const config = await api.posTerminal.getConfiguration({ serial_no: opts.serial_no });
    const keys = await api.posTerminal.keyExchange({ serial_no: opts.serial_no, refresh: opts.refresh ?? false });
    return new PosTerminalSession(api, opts.serial_no, config.data, keys.data.pin_key);
  }

  get terminalId(): string {
    return String(this.configuration.terminal.terminal_id);
  }

  /** The terminal PIN key (32 hex), for the device's PIN-block building. Memory only: never log or store it. */
  pinKey(): string {
    return this.#pinKey;
  }

  /** The key exchange with refresh=true (F2): new keys from the processor (use when the keys seem stale). */
  async refreshKeys(): Promise<void> {
    const keys = await this.#api.posTerminal.keyExchange({ serial_no: this.serialNo, refresh: true });
    this.#pinKey = keys.data.pin_key;
  }

  /** Forget the key (end of the session). */
  close(): void {
    this.#pinKey = '';
  }

  /** What may be shown or stored: no key material. */
  toJSON(): { serialNo: string; terminalId: string; status?: string; merchant?: string; hasPinKey: boolean } {
    return {
      serialNo: this.serialNo,
      terminalId: this.terminalId,
      status: this.configuration.terminal.status ?? undefined,
      merchant: this.configuration.merchant?.name ?? undefined,
      hasPinKey: this.#pinKey.length > 0,
    };
  }

  [inspect.custom](): string {
    return `PosTerminalSession ${JSON.stringify(this.toJSON())}`;
  }
}

/** Opens a terminal session (F1 + F2) with the API client; `pin_key` stays in the returned object. */
export function openPosTerminalSession(
  ctx: Pick<StarterContext, 'api'>,
  opts: PosTerminalSessionOptions,
): Promise<PosTerminalSession> {
  return PosTerminalSession.open(ctx.api, opts);
}

/**
 * A POS card read sealed in the claim check (the card data never reaches Temporal): the handle with
 * the BIN and last four for display, and `input` with the read's fields replaced by that card. The
 * caller discards `handle` when its start fails.
 */
export async function sealPosCardRead<T>(
  ctx: Pick<StarterContext, 'claimCheck'>,
  read: { card_pan: string } & Record<string, unknown>,
  input: Record<string, unknown> = read,
): Promise<{ handle: string; card: { handle: string; bin: string; last4: string }; input: T }> {
  const sealedFields = POS_SEALED_FIELDS as readonly string[];
  const cardData = Object.fromEntries(
    Object.entries(read).filter(([k, value]) => sealedFields.includes(k) && value !== undefined),
  ) as PosSealedCardData;
  const handle = await ctx.claimCheck.seal('pos-card', cardData);
  const card = { handle, bin: read.card_pan.slice(0, 6), last4: read.card_pan.slice(-4) };
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !sealedFields.includes(k)));
  return { handle, card, input: { ...rest, card } as T };
}

/**
 * Seals the card read (sealPosCardRead) and starts its flow (a sale, a pre-authorisation, a refund)
 * with the sealed input in place of the read; if the start fails, the sealed record is deleted again.
 */
export async function startWithSealedRead<W extends Workflow>(
  ctx: StarterContext,
  read: { card_pan: string } & Record<string, unknown>,
  input: Record<string, unknown>,
  start: Omit<FlowStart<W>, 'args'>,
): Promise<WorkflowHandle<W>> {
  const { handle, input: sealedInput } = await sealPosCardRead<Parameters<W>[0]>(ctx, read, input);
  try {
    // With its event target resolved (docs/events.md).
    return await startFlow<W>(ctx, { ...start, args: [sealedInput] as Parameters<W> });
  } catch (err) {
    await ctx.claimCheck.discard(handle).catch(() => undefined);
    throw err;
  }
}

// ---- POS terminal transaction (F3/F4) ----------------------------------------------------

/**
 * Starts one card transaction (workflow id `pos-txn-<merchant_ref>`; a second start for the
 * same merchant_ref is refused). `terminal_id` comes from the session when one is given.
 * Every rule of the transaction's fields is checked here first (StarterInputError names field and rule, never the
 * value); then the card read is sealed (the store's TTL) and the workflow gets its handle. If the
 * start fails, the sealed record is deleted again.
 */
export async function startPosTransaction(
  ctx: StarterContext,
  input: Omit<PosTransactionInput, 'terminal_id'> & { terminal_id?: string },
  session?: Pick<PosTerminalSession, 'terminalId'>,
): Promise<WorkflowHandle<typeof posTerminalTransactionWorkflow>> {
  const full = { ...input, terminal_id: input.terminal_id ?? session?.terminalId } as PosTransactionInput;
  const v = parseStarterInput(PosTransactionInputSchema, full, 'POS transaction');
  if (v.transaction_type !== 'Purchase') {
    // A Refund or Completion must name its original and follow its own rules: their own flows.
    throw new StarterInputError('POS transaction', [
      {
        field: 'transaction_type',
        rule: 'must be Purchase here: a refund starts with startPosRefund, a pre-authorisation with startPosPreAuth (and its completion with completePosPreAuth)',
      },
    ]);
  }
  return startWithSealedRead<typeof posTerminalTransactionWorkflow>(ctx, v, full, {
    operation: 'start POS transaction',
    workflowType: 'posTerminalTransactionWorkflow',
    workflowId: posTransactionWorkflowId(v.merchant_ref),
    search: posTransactionStartSearch(v),
  });
}

export const posTransactionHandle = handleFor<typeof posTerminalTransactionWorkflow>(posTransactionWorkflowId);

export const runPosTransaction = runToResult(startPosTransaction);
