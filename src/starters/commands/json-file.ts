// A command's JSON input file ('-' reads stdin). Card data and whole inputs come from a file,
// never from flags: command lines end up in shell history and process lists.
import { readFileSync } from 'node:fs';

/** The file's JSON, typed by the caller (the starter validates it; a bad value is its StarterInputError). */
export function readJsonFile<T = never>(file: string): T {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  return JSON.parse(text) as T;
}
