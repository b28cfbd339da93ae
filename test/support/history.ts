// A workflow's history as someone reading the store (or the Web UI) would see it: every string and
// byte field as text, its event types, and its payloads decoded through the project's codec, for
// "no secret in the history" checks.
import type { Payload } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import type { EncryptionSettings } from '../../src/codec/data-converter';

/** Every string and every byte field of the history (bytes decoded as UTF-8), joined: what someone reading the stored history could see. */
export async function rawHistoryText(handle: WorkflowHandle): Promise<string> {
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(walk);
  };
  walk(await handle.fetchHistory());
  return parts.join('\n');
}

/** History event types, e.g. to count accepted Updates. */
export async function eventTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]);
}

/** Every Payload object (metadata + data) in a history's JSON form. */
export function collectPayloads(node: unknown, out: Payload[] = []): Payload[] {
  if (Array.isArray(node)) {
    for (const n of node) collectPayloads(n, out);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const meta = o.metadata as Record<string, string> | undefined;
    if (meta && typeof meta === 'object' && typeof meta.encoding === 'string' && typeof o.data === 'string') {
      out.push({
        metadata: Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(o.data, 'base64'),
      });
    } else {
      for (const v of Object.values(o)) collectPayloads(v, out);
    }
  }
  return out;
}

/**
 * A workflow's whole history twice over: as stored (JSON, payloads encrypted) and with every
 * payload decrypted through the codec, the way the Web UI or anyone holding the payload key sees it.
 */
export async function historyTexts(
  handle: WorkflowHandle,
  encryption: EncryptionSettings,
): Promise<{ raw: string; decoded: string; payloads: number }> {
  const raw = JSON.stringify(temporal.api.history.v1.History.fromObject(await handle.fetchHistory()).toJSON());
  const decoded = await new AesGcmPayloadCodec(encryption.keys, encryption.activeKeyId).decode(
    collectPayloads(JSON.parse(raw)),
  );
  return {
    raw,
    decoded: decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8')).join('\n'),
    payloads: decoded.length,
  };
}
