/**
 * A fixed knowledge base for tests: the in-memory `KnowledgeBase` of
 * `@rolecraft/core`, built by the same `KnowledgeBase.make`, over documents
 * given in the test instead of files.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { FixedKnowledge } from "@rolecraft/testing"
 * import { Effect, Schema } from "effect"
 *
 * const Support = Role.make({
 *   identity: { name: "support", goal: "Answer from the policy", domain: "support" },
 *   actions: {
 *     policy: Action.local({
 *       description: "The policy passage for a case",
 *       parameters: { reason: Schema.String },
 *       run: (_, context) => context.knowledge[0]?.source ?? "none"
 *     }).pipe(Action.retrieval({ topK: 1 }))
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "test", roles: [Support] })
 *   return yield* agent.executeAction("policy", { reason: "damaged parcel" }) // "policy#damaged"
 * }).pipe(
 *   Effect.scoped,
 *   Effect.provide(
 *     FixedKnowledge.layer({
 *       "policy#damaged": "A damaged parcel is refunded in full.",
 *       "policy#late": "A late parcel gets a voucher."
 *     })
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 */
import { KnowledgeBase } from "@rolecraft/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The documents: a list of `{ source, text }`, or a record from source to
 * text.
 *
 * @category models
 * @since 0.1.0
 */
export type Documents = ReadonlyArray<KnowledgeBase.Document> | Readonly<Record<string, string>>

const toList = (documents: Documents): ReadonlyArray<KnowledgeBase.Document> =>
  Array.isArray(documents)
    ? (documents as ReadonlyArray<KnowledgeBase.Document>)
    : Object.entries(documents).map(([source, text]) => ({ source, text }))

/**
 * A knowledge base that searches `documents` for every role, whatever its
 * `spec.knowledge` lists (sources are not read). Search, ranking and `topK`
 * are the real ones (minisearch).
 *
 * @example
 * ```ts
 * import { FixedKnowledge } from "@rolecraft/testing"
 *
 * const knowledge = FixedKnowledge.layer({ "faq#refunds": "Refunds are paid within 30 days." })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (documents: Documents): Effect.Effect<KnowledgeBase.KnowledgeBase["Service"]> => {
  const list = toList(documents)
  return KnowledgeBase.make({ load: () => Effect.succeed(list) })
}

/**
 * {@link make} as a layer providing `KnowledgeBase`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (documents: Documents): Layer.Layer<KnowledgeBase.KnowledgeBase> =>
  Layer.effect(KnowledgeBase.KnowledgeBase, make(documents))
