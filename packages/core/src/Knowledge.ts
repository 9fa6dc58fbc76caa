/**
 * Knowledge retrieval: passages from a role's knowledge sources, found for
 * each call of an action with a retrieval policy and given to the action
 * (`context.knowledge`) and to llm prompts.
 *
 * @example
 * ```ts
 * import { Action, Role } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const Policies = Role.make({
 *   identity: { name: "policies", goal: "Answer from the handbook", domain: "support" },
 *   spec: { knowledge: ["./handbook"] },
 *   actions: {
 *     answer: Action.llm({
 *       description: "Answer a question from the handbook",
 *       parameters: { question: Schema.String }
 *     }).pipe(Action.retrieval({ topK: 3, query: ({ question }: { question: string }) => question }))
 *   }
 * }) // needs KnowledgeBase.layer: each call's prompt gets the three best passages
 * ```
 *
 * @since 0.1.0
 */
import type * as KnowledgeBase from "./KnowledgeBase.ts"

/**
 * One retrieved passage: its `source` (file path or id), `text`, and search
 * `score` (higher is better).
 *
 * @category models
 * @since 0.1.0
 */
export type Passage = KnowledgeBase.Passage

/**
 * What `Action.retrieval` attaches: `topK` passages (default 5) for the query
 * `query(args)` (default: the string arguments joined with spaces).
 *
 * @category models
 * @since 0.1.0
 */
export interface Retrieval<Args> {
  readonly topK?: number | undefined
  readonly query?: ((args: Args) => string) | undefined
}

/**
 * The default query: the action's top-level string arguments, in declared
 * order, joined with spaces.
 *
 * @category utils
 * @since 0.1.0
 */
export const defaultQuery = (args: Readonly<Record<string, unknown>>): string => {
  let query = ""
  for (const key in args) {
    const value = args[key]
    if (typeof value === "string" && value !== "") query = query === "" ? value : `${query} ${value}`
  }
  return query
}
