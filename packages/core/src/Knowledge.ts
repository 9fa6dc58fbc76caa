/**
 * Knowledge retrieval (SPEC §9 step 6): passages from a role's knowledge
 * sources, found for each call and given to the action (`context.knowledge`)
 * and to llm prompts.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { RetrievalFailure } from "./ActionError.ts"

/**
 * One retrieved passage: its `source` (file path or id), `text`, and search
 * `score` (higher is better).
 *
 * @since 0.1.0
 */
export interface Passage {
  readonly source: string
  readonly text: string
  readonly score: number
}

/**
 * What `Action.retrieval` attaches: `topK` passages (default 5) for the query
 * `query(args)` (default: the string arguments joined with spaces).
 *
 * @since 0.1.0
 */
export interface Retrieval<Args> {
  readonly topK?: number | undefined
  readonly query?: ((args: Args) => string) | undefined
}

/**
 * Step 6. Without a retrieval policy there is nothing to retrieve. Filled in
 * by the policies issue.
 *
 * @since 0.1.0
 */
export const retrieve = (
  _action: string,
  _policy: Retrieval<unknown> | undefined,
  _args: unknown
): Effect.Effect<ReadonlyArray<Passage>, RetrievalFailure> => Effect.succeed([])
