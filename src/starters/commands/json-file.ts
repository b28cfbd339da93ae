// A command's JSON input file ('-' reads stdin). Card data and whole inputs come from a file,
// never from flags: command lines end up in shell history and process lists.
import { readFileSync } from 'node:fs';
import { StarterInputError } from '../../shared/input-error';
import { currentIo } from './context';

/**
 * The file's JSON, typed by the caller (the starter validates it; a bad value is its StarterInputError).
 * A missing file or one that is not JSON is refused the same way (bad input, exit 2), naming --file.
 */
export function readJsonFile<T = never>(file: string): T {
  let text: string;
  try {
    text = file === '-' ? currentIo().stdin.readAllSync() : readFileSync(file, 'utf8');
  } catch (err) {
    throw new StarterInputError('file', [
      { field: '--file', rule: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` },
    ]);
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    // The parser's message may quote the file's text (card data): name the rule only.
    throw new StarterInputError('file', [{ field: '--file', rule: 'must hold JSON' }]);
  }
}
