// How a command gets its starter context (connected on first use). Its own module, so the
// commands and the index never import each other.
import type { StarterContext } from '../connect';

export type ContextFactory = () => Promise<StarterContext>;
