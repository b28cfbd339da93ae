// A merchant's answer is read up to a fixed size, never in full: an endpoint that streams without
// end (or a huge error page) cannot hold a worker's memory or its slot.
import type { Readable } from 'node:stream';

/** What is read of an answer body at most. */
export const MAX_ANSWER_BODY_BYTES = 64 * 1024;

/**
 * Up to `limit` bytes of the body as UTF-8 text; the rest is not read (the stream is destroyed,
 * which also frees the connection).
 */
export async function readBoundedText(body: Readable, limit = MAX_ANSWER_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      chunks.push(buf.subarray(0, limit - size));
      size += Math.min(buf.length, limit - size);
      if (size >= limit) break;
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}
